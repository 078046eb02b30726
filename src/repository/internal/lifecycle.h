// Lifecycle: the state behind ModelRepository (see model_repository.h for the
// contract): one Entry per registered model, the load pool, the memory
// ledger, and the requests waiting for loads.
//
// Everything mutable is guarded by mu_. The rule that keeps it free of
// deadlocks: mu_ is never held while calling out (backend, scheduler,
// Retire, a caller's callback, release_memory) and never while dropping a
// ModelHandle, because the last handle's destructor calls back in
// (Released). Handles and callbacks are moved out under the lock and dropped
// or called after it. An instance asks for its successor (ReadyInstance) from
// ServedModel::Enqueue, on a request's thread, holding no lock: mu_ is taken
// and released before the scheduler is called.
//
// The budget's ledger is a MemoryLedger (memory_ledger.h), kept under mu_:
// every live ServedModel instance has a charge there from the moment it is
// installed until its destructor runs (Released), wherever that happens.
// Victims chosen for eviction no longer count as committed, since the load
// thread that chose them drops their only handles right after. A load that
// finds no room while models with requests in flight hold the budget is
// parked (its requests keep waiting, up to their deadlines) and retried when
// a request ends, memory is freed or a load ends. What is outside the
// footprints is re-read after every job while no load runs (MeasureOutside),
// and the backend's caches are dropped (Backend::ReleaseCaches) when the
// ledger says they are due.
// Each model's job and each version's service are state machines (phase.h):
// Entry::phase and Version::phase change only through Step, which applies
// Next. A QUARANTINED version (Quarantine) has no instance and is not loaded
// on demand; a load through the management API clears it.
// Lifecycle lives in a shared_ptr: instances hold a weak_ptr to it for their
// release, and may outlive the repository.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/thread_annotations.h"
#include "repository/cache_policy.h"
#include "repository/internal/cache_metrics.h"
#include "repository/internal/deadline_timer.h"
#include "repository/internal/load_pool.h"
#include "repository/internal/memory_ledger.h"
#include "repository/internal/phase.h"
#include "repository/internal/version_loader.h"
#include "repository/model_repository.h"
#include "repository/model_store.h"

namespace inferd::repository::internal {

// How often a load that waits for room looks again, besides the events.
inline constexpr std::chrono::milliseconds kParkedRetry{50};

class Lifecycle : public std::enable_shared_from_this<Lifecycle> {
 public:
  using Options = ModelRepository::Options;
  using AcquireCallback = ModelRepository::AcquireCallback;
  using DoneCallback = ModelRepository::DoneCallback;

  explicit Lifecycle(Options options);
  // Registers the store's models; starts the load threads and the timer.
  Status Init();
  // Answers waiting callers, stops the threads, retires every version.
  void Shutdown();

  void StartEagerLoads();
  bool WaitForStartup(TimePoint deadline);
  bool AllReady() const;

  void Acquire(const std::string& model, std::optional<int64_t> version, TimePoint deadline,
               AcquireCallback done);
  StatusOr<ModelHandle> Get(const std::string& model, std::optional<int64_t> version) const;
  void Load(const std::string& model, DoneCallback done);
  void Unload(const std::string& model, DoneCallback done);
  Status Quarantine(const std::string& model, int64_t version, const std::string& reason);
  std::vector<ModelStatus> List() const;
  StatusOr<ModelStatus> GetStatus(const std::string& model) const;
  ModelRepository::MemoryUse memory() const;

 private:
  struct Version {
    StoredVersion stored;
    Footprint footprint;  // the estimate, or the last measured
    // What its loads found (variant, calibration); replaced when the file changes.
    std::shared_ptr<LoadMemory> memory = std::make_shared<LoadMemory>();
    ModelHandle handle;   // the serving instance: set iff Serving(phase)
    uint64_t serial = 0;  // its Charge
    std::string error;    // the last load of this version failed
    VersionPhase phase = VersionPhase::kUnloaded;
    std::string quarantine_reason;  // while kQuarantined
  };
  struct Waiter {
    std::optional<int64_t> version;
    TimePoint since;
    TimePoint deadline;
    AcquireCallback done;
  };
  struct Entry {
    std::string name;
    std::string dir;
    std::optional<config::ModelConfig> config;
    std::string config_error;
    std::map<int64_t, Version> versions;
    LoadPolicy policy = LoadPolicy::kEager;
    bool pinned = false;
    bool unloaded_by_hand = false;
    std::string error;  // the last load failed (config, no versions, default version)
    Phase phase = Phase::kIdle;  // its job (phase.h)
    bool rescan = false;   // a parameter of the queued load: it reads the store again
    bool startup = false;  // an eager load of StartEagerLoads, not finished
    TimePoint load_posted{};  // when its load job was queued (options_.clock)
    std::vector<DoneCallback> load_done, unload_done;
    std::vector<Waiter> waiters;
    TimePoint lru_time{};  // last request, or the end of the last load
    std::optional<TimePoint> last_request;
  };
  // What the reserve step of a load hands to the load and install steps.
  struct LoadPlan {
    config::ModelConfig config;
    std::string dir;
    std::vector<std::tuple<StoredVersion, Footprint, std::shared_ptr<LoadMemory>>> todo;
    int64_t reserve = 0;     // bytes reserved in the ledger while it runs
    bool measure = false;    // some version's footprint is not measured yet: load alone
    bool defer_calibration = false;
    Duration queued{};       // waited for a load thread, or for room
    std::vector<ModelHandle> victims;  // evicted to make room: retired before the load
  };
  struct LoadedVersion {
    int64_t version = 0;
    uint64_t serial = 0;
    StatusOr<ModelHandle> handle;
  };
  // What a job hands back to be done after the lock is released.
  struct Aftermath {
    std::vector<ModelHandle> retire;  // Retire, then drop
    std::vector<std::pair<AcquireCallback, StatusOr<ModelHandle>>> answers;
    std::vector<std::pair<DoneCallback, Status>> dones;
    bool release_memory = false;
  };

  // Requests.
  StatusOr<ModelHandle> ResolveLocked(const Entry& e, std::optional<int64_t> version) const
      REQUIRES(mu_);
  Status NotLoadableLocked(const Entry& e) const REQUIRES(mu_);
  // The highest QUARANTINED version, if any; the refusal that names it.
  std::optional<int64_t> QuarantinedVersionLocked(const Entry& e) const REQUIRES(mu_);
  Status QuarantinedLocked(const Entry& e, int64_t version) const REQUIRES(mu_);
  std::string UnknownModelLocked(const std::string& name) const REQUIRES(mu_);
  Entry* FindLocked(const std::string& name) REQUIRES(mu_);
  const Entry* FindLocked(const std::string& name) const REQUIRES(mu_);
  // Without the versions' calibrations: `handles` receives one handle per
  // version (null when not resident) for the caller to read them after
  // releasing mu_.
  ModelStatus StatusLocked(const Entry& e, std::vector<ModelHandle>* handles) const
      REQUIRES(mu_);
  TimePoint ExpireWaiters(TimePoint now);

  // Jobs (on the load threads).
  // Applies Next to the entry's (or version's) phase; an illegal transition
  // is a bug: it asserts in debug builds, logs and keeps the phase otherwise.
  void Step(Entry& e, Event event) REQUIRES(mu_);
  void Step(const Entry& e, Version& slot, int64_t version, VersionEvent event) REQUIRES(mu_);
  // Asks for a load (Event::kLoadAsked): posts the job when the entry was idle.
  void AskLoadLocked(Entry& e, bool rescan) REQUIRES(mu_);
  void PostLoadLocked(Entry& e, bool rescan) REQUIRES(mu_);
  void PostUnloadLocked(Entry& e) REQUIRES(mu_);
  // After an event that may chain the next job (kLoadEnded, kUnloadEnded,
  // kAbandoned): posts the job the new phase names, unless shutting down.
  void ChainLocked(Entry& e, Event event) REQUIRES(mu_);
  void PostChainedLocked(Entry& e) REQUIRES(mu_);
  // Takes a serving instance out of the slot (`event`: kRetired or
  // kQuarantined) and hands it to `after` to be retired and dropped.
  void RetireLocked(Entry& e, Version& slot, int64_t version, VersionEvent event,
                    Aftermath* after) REQUIRES(mu_);
  metrics::Gauge& QuarantinedGauge(const std::string& model, int64_t version);
  // A load: Reserve (store, room, reservation; may park), LoadVersions (no
  // lock held), Install (the instances in place, waiters answered).
  void RunLoad(const std::string& name);
  // Nothing (and `after` holds the answers) when the load cannot go on: a
  // config error, no version, no room; or parked (then `after` is empty).
  std::optional<LoadPlan> ReserveLocked(Entry& e, TimePoint ran, Aftermath* after)
      REQUIRES(mu_);
  std::vector<LoadedVersion> LoadVersions(const std::string& name, const LoadPlan& plan)
      EXCLUDES(mu_);
  void InstallAllLocked(Entry& e, const LoadPlan& plan, std::vector<LoadedVersion> loaded,
                        Aftermath* after) REQUIRES(mu_);
  void RunUnload(const std::string& name);
  bool RefreshFromStoreLocked(Entry& e, const StoredModel& stored, Aftermath* after)
      REQUIRES(mu_);
  // Answers the load's waiters and callers with `status` and counts the
  // start-up load done; FinishJobLocked then applies `event` (ChainLocked).
  void AnswerJobLocked(Entry& e, const Status& status, Aftermath* after) REQUIRES(mu_);
  void FinishJobLocked(Entry& e, const Status& status, Event event, Aftermath* after)
      REQUIRES(mu_);
  void InstallLocked(Entry& e, int64_t version, uint64_t serial, StatusOr<ModelHandle> loaded,
                     Aftermath* after) REQUIRES(mu_);
  // `measure`: re-read what is outside the footprints once the memory is
  // back (the end of a job).
  void Carry(Aftermath after, bool measure = false);

  // Budget.
  // Re-reads what is outside the footprints from the process's resident
  // memory (a file read, so outside mu_); skipped while a load runs, whose
  // memory is only partly there. Drops the backend's caches when the ledger
  // says they are due; with no model resident, also recycles the threads.
  void MeasureOutside() EXCLUDES(mu_);
  bool EvictableLocked(const Entry& e) const REQUIRES(mu_);
  // Evicts so that `need` (and, where eviction can make room for them,
  // `transient`, what the load holds only while it runs, and what is outside
  // the footprints) fits;
  // `soft_left_out` (may be null): room was made for `need` alone.
  std::vector<ModelHandle> EvictLocked(const std::string& keep, int64_t need, int64_t transient,
                                       bool* fits, std::string* why_not, bool* soft_left_out)
      REQUIRES(mu_);
  void Released(uint64_t serial);
  std::function<void()> OnRelease(uint64_t serial);
  std::function<void()> OnIdle();
  // ServedModel::Parts::successor of `model`'s `version`: what Get(model,
  // version) answers when it answers a handle, else null.
  std::function<ModelHandle()> Successor(const std::string& model, int64_t version);
  ModelHandle ReadyInstance(const std::string& model, int64_t version) const EXCLUDES(mu_);
  // Takes the instance `serial` of `model`'s `version` out of service, if it
  // is still the one serving (a forward of an older instance says nothing
  // about the new one).
  Status QuarantineInstance(const std::string& model, int64_t version,
                            std::optional<uint64_t> serial, const std::string& reason)
      EXCLUDES(mu_);
  std::function<void(std::string)> OnHung(const std::string& model, int64_t version,
                                          uint64_t serial);
  // Posts the loads that wait for room again (something was freed or went idle).
  void RetryParkedLocked() REQUIRES(mu_);
  void UpdateGaugesLocked() REQUIRES(mu_);
  // Removes the model's metric series once none of its instances is alive and
  // no load of it is under way (see cache_metrics.h).
  void ForgetSeriesIfGoneLocked(const Entry& e) REQUIRES(mu_);

  const Options options_;
  const ModelStore store_;
  const VersionLoadContext load_context_;
  std::unique_ptr<CacheMetrics> metrics_;

  mutable Mutex mu_;
  CondVar startup_cv_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
  MemoryLedger ledger_ GUARDED_BY(mu_);
  int startup_pending_ GUARDED_BY(mu_) = 0;
  bool startup_failed_ GUARDED_BY(mu_) = false;
  bool started_ GUARDED_BY(mu_) = false;
  bool accepting_jobs_ GUARDED_BY(mu_) = false;
  bool trim_posted_ GUARDED_BY(mu_) = false;
  std::vector<std::string> parked_ GUARDED_BY(mu_);  // loads waiting for room, in order

  // A version's first load holds this exclusively (its RSS growth is its own);
  // loads whose footprint is known share it. It guards no data (so it stays a
  // std::shared_mutex, outside the analysis).
  std::shared_mutex measure_mu_;
  std::unique_ptr<LoadPool> pool_;
  std::unique_ptr<DeadlineTimer> timer_;
};

}  // namespace inferd::repository::internal
