// Lifecycle: the memory budget: what may be evicted and which to evict for a
// load (the ledger plans, memory_ledger.h), the gauges of the ledger, and the
// memory outside the footprints (MeasureOutside). Registration, requests and status are in lifecycle.cc,
// the jobs in lifecycle_jobs.cc.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "repository/internal/lifecycle.h"
#include "repository/memory_budget.h"

namespace inferd::repository::internal {

ModelRepository::MemoryUse Lifecycle::memory() const {
  MutexLock lock(&mu_);
  return {ledger_.budget(), ledger_.resident(), ledger_.reserved()};
}

bool Lifecycle::EvictableLocked(const Entry& e) const {
  if (e.pinned || e.phase != Phase::kIdle || !e.waiters.empty()) return false;
  bool any = false;
  for (const auto& [v, slot] : e.versions) {
    if (!slot.handle) continue;
    // Handles are copied out only under mu_, so a count of 1 (ours) cannot
    // grow while we hold it: nothing is queued, running or about to enqueue.
    if (slot.handle.use_count() != 1) return false;
    any = true;
  }
  return any;
}

std::vector<ModelHandle> Lifecycle::EvictLocked(const std::string& keep, int64_t need,
                                                int64_t transient, bool* fits,
                                                std::string* why_not, bool* soft_left_out) {
  std::vector<CacheEntry> candidates;
  int64_t busy = 0, pinned = 0;
  for (const auto& [name, e] : entries_) {
    const int64_t resident = ledger_.ResidentOf(name);
    if (name == keep || resident == 0) continue;
    if (EvictableLocked(e)) {
      candidates.push_back({name, resident, e.lru_time});
    } else if (e.pinned) {
      pinned += resident;
    } else {
      busy += resident;
    }
  }
  const int64_t budget = ledger_.budget();
  EvictionPlan plan = ledger_.PlanRoom(candidates, need, transient, soft_left_out);
  if (ledger_.NoteOutsideLeftOut(plan.outside_left_out)) {
    spdlog::warn(
        "memory budget: {} of resident memory outside the models' footprints (caches, "
        "allocator free lists, activations) leaves no room under the budget of {} even with "
        "every idle model evicted; until it does, the budget holds the footprints only",
        FormatBytes(ledger_.outside()), FormatBytes(budget));
  }
  *fits = plan.fits;
  if (!plan.fits && why_not) {
    *why_not = "the memory budget (" + FormatBytes(budget) + ") cannot make room for " +
               FormatBytes(need) + ": " + FormatBytes(ledger_.committed()) + " is committed (" +
               FormatBytes(busy) + " by models with requests in flight or loading, " +
               FormatBytes(pinned) + " by pinned models, " + FormatBytes(ledger_.reserved()) +
               " by loads in progress)";
    if (need > budget) {
      *why_not = "it needs about " + FormatBytes(need) + ", more than the whole memory budget (" +
                 FormatBytes(budget) + ")";
    }
  }
  std::vector<ModelHandle> victims;
  const TimePoint now = options_.clock->Now();
  for (const auto& name : plan.victims) {
    Entry& e = entries_.at(name);
    spdlog::info("model '{}': evicted ({} resident, idle {} ms) to make room for '{}'", name,
                 FormatBytes(ledger_.ResidentOf(name)), MillisBetween(e.lru_time, now), keep);
    for (auto& [v, slot] : e.versions) {
      if (!slot.handle) continue;
      ledger_.MarkEvicting(slot.serial);
      Step(e, slot, v, VersionEvent::kRetired);
      victims.push_back(std::move(slot.handle));
      slot.handle = nullptr;
    }
    if (metrics_) metrics_->evictions->Increment();
  }
  return victims;
}

void Lifecycle::UpdateGaugesLocked() {
  if (!metrics_) return;
  metrics_->loaded->Set(static_cast<double>(ledger_.serving()));
  metrics_->resident_bytes->Set(static_cast<double>(ledger_.resident()));
  metrics_->outside_bytes->Set(static_cast<double>(ledger_.outside()));
}

void Lifecycle::MeasureOutside() {
  if (!options_.resident_bytes) return;
  for (int pass = 0; pass < 2; ++pass) {
    const int64_t now = options_.resident_bytes();
    MutexLock lock(&mu_);
    if (!ledger_.ReadOutside(now)) return;
    UpdateGaugesLocked();
    if (pass == 1) {
      ledger_.CachesReleased();
      return;
    }
    const MemoryLedger::CacheRelease due = ledger_.CacheReleaseDue();
    if (due == MemoryLedger::CacheRelease::kNotDue) return;
    const bool empty = due == MemoryLedger::CacheRelease::kEmpty;
    spdlog::info(
        "memory outside the models' footprints: {} ({} after the last release, {} models' "
        "bytes resident): dropping the backend's caches{}",
        FormatBytes(ledger_.outside()), FormatBytes(ledger_.outside_after_release()),
        FormatBytes(ledger_.resident()), empty ? ", recycling the load and executor threads" : "");
    // What the backend keeps per thread for every model a load thread warmed up
    // or an executor ran goes with the thread: each is replaced after its
    // current job (LoadPool, Scheduler::RecycleExecutors). Only with nothing
    // resident: the caches also serve reloads (verifying the known variant),
    // which were 7-13% slower at the median with a recycle at every growth
    // (docs/performance/model-cache.md), and a resident model's batches.
    const bool recycle = empty && accepting_jobs_;
    if (recycle) {
      pool_->Recycle();
      ledger_.ThreadsRecycled();
    }
    lock.Unlock();
    if (recycle && options_.scheduler) options_.scheduler->RecycleExecutors(options_.release_memory);
    if (options_.backend) options_.backend->ReleaseCaches();
    if (options_.release_memory) options_.release_memory();
    if (metrics_) metrics_->cache_releases->Increment();
  }
}

}  // namespace inferd::repository::internal
