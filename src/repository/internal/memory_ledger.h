// MemoryLedger: what the model cache's memory budget carries, and nothing
// else (TF Serving's ResourceTracker is the model: reserve, commit, release).
//
//   reserved   the estimated peak of each load while it runs (Reserve, then
//              Unreserve when the load's instances are installed);
//   resident   one charge per live served instance, from the moment it is
//              installed (Commit) until its last handle is dropped
//              (Release), wherever that happens; a charge is `retired` once
//              its instance left service (still resident until released) and
//              `evicting` once chosen as a victim (no longer committed: the
//              load thread that chose it drops its only handle right after);
//   outside    the process's resident memory above its base (read before any
//              model was loaded) that no charge accounts for: the backend's
//              caches, the allocator's free lists, activations
//              (cache_policy.h says how eviction treats it).
//
// committed = resident - evicting + reserved. The ledger decides what fits
// (PlanRoom, OverBudget) and when the backend's caches are due to be dropped
// (CacheReleaseDue); it calls nothing and reads no file: the caller reads the
// process's resident memory and drops the caches.
// Not thread-safe: its owner (Lifecycle) keeps it under its own mutex, as TF
// Serving's manager keeps its ResourceTracker under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "repository/cache_policy.h"

namespace inferd::repository::internal {

class MemoryLedger {
 public:
  // `budget`: bytes for the models (<= 0: no budget, everything fits).
  explicit MemoryLedger(int64_t budget = 0) : budget_(budget) {}

  int64_t budget() const { return budget_; }
  bool limited() const { return budget_ > 0; }
  // The process's resident bytes before any model was loaded.
  void set_base(int64_t bytes) { base_ = bytes; }

  // A load's peak while it runs.
  void Reserve(int64_t bytes) { reserved_ += bytes; }
  void Unreserve(int64_t bytes) { reserved_ -= bytes; }
  int64_t reserved() const { return reserved_; }

  // A serial for an instance about to be loaded (its release callback carries it).
  uint64_t NewSerial() { return next_serial_++; }
  // The instance `serial` of `model`, `bytes` of footprint, is installed.
  void Commit(uint64_t serial, const std::string& model, int64_t bytes);
  // It left service (replaced, unloaded, quarantined); resident until released.
  void Retire(uint64_t serial);
  // It was chosen as an eviction victim: no longer committed.
  void MarkEvicting(uint64_t serial);
  // Its last handle is gone: the model it was of, or nothing for a serial
  // without a charge (released already, or never committed).
  std::optional<std::string> Release(uint64_t serial);

  int64_t resident() const { return resident_; }
  int64_t committed() const { return resident_ - evicting_ + reserved_; }
  int64_t ResidentOf(const std::string& model) const;
  int RetiringOf(const std::string& model) const;  // retired charges still alive
  bool Holds(const std::string& model) const;      // any charge of `model` alive
  int serving() const;                             // charges neither retired nor evicting

  // Which of `candidates` to evict so that `need` fits, with `outside` and
  // `transient` (what the load holds only while it runs) on the budget where
  // eviction can make room for them, else with `outside` alone, else for
  // `need` alone (the plan's outside_left_out). `peak_left_out` (may be
  // null): no room was made for `transient`. No budget: everything fits.
  EvictionPlan PlanRoom(const std::vector<CacheEntry>& candidates, int64_t need, int64_t transient,
                        bool* peak_left_out) const;
  // The measured footprints may exceed the estimates.
  bool OverBudget() const { return limited() && committed() + outside_ > budget_; }
  // Records whether the last plan left `outside` out; true when it did and
  // the plan before did not (time to say so in the log).
  bool NoteOutsideLeftOut(bool left_out);

  // Re-reads outside from the process's resident bytes; false (nothing read)
  // while a load holds a reservation: its memory is only partly there.
  bool ReadOutside(int64_t process_resident);
  int64_t outside() const { return outside_; }
  int64_t outside_after_release() const { return outside_after_release_; }

  // Whether the backend's caches, which keep memory for every distinct model
  // ever run, are due to be dropped: kGrew when outside grew by a tenth of
  // the budget since they were last dropped; kEmpty when no model is resident
  // and outside grew since, or a model was resident since the threads were
  // last recycled (what it left per thread is still there).
  enum class CacheRelease { kNotDue, kGrew, kEmpty };
  CacheRelease CacheReleaseDue() const;
  void CachesReleased() { outside_after_release_ = outside_; }
  void ThreadsRecycled() { resident_since_recycle_ = false; }

 private:
  struct Charge {
    std::string model;
    int64_t bytes = 0;
    bool retired = false;
    bool evicting = false;
  };
  struct ModelBytes {
    int64_t resident = 0;
    int charges = 0;
    int retiring = 0;
  };

  const int64_t budget_;
  int64_t base_ = 0;
  std::map<uint64_t, Charge> charges_;        // live instances by serial
  std::map<std::string, ModelBytes> models_;  // the charges summed per model
  uint64_t next_serial_ = 1;
  int64_t resident_ = 0;               // sum of charges
  int64_t evicting_ = 0;               // charges of chosen victims
  int64_t reserved_ = 0;               // estimates of running loads
  int64_t outside_ = 0;                // resident - base - resident_, when last read
  int64_t outside_after_release_ = 0;  // outside_ after the caches went
  bool outside_left_out_ = false;      // the last plan could not make room for it
  bool resident_since_recycle_ = false;
};

}  // namespace inferd::repository::internal
