// Lifecycle: the memory budget: what may be evicted and which to evict for a
// load, the gauges of the ledger, and the memory outside the footprints
// (MeasureOutside). Registration, requests and status are in lifecycle.cc,
// the jobs in lifecycle_jobs.cc.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "repository/internal/lifecycle.h"
#include "repository/memory_budget.h"

namespace inferd::repository::internal {

ModelRepository::MemoryUse Lifecycle::memory() const {
  MutexLock lock(&mu_);
  return {options_.memory_budget, resident_, reserved_};
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
    if (name == keep || e.resident_bytes == 0) continue;
    if (EvictableLocked(e)) {
      candidates.push_back({name, e.resident_bytes, e.lru_time});
    } else if (e.pinned) {
      pinned += e.resident_bytes;
    } else {
      busy += e.resident_bytes;
    }
  }
  const int64_t budget = options_.memory_budget;
  EvictionPlan plan =
      PlanEviction(candidates, CommittedLocked(), outside_ + transient, need, budget);
  if (soft_left_out) *soft_left_out = plan.outside_left_out;
  if (plan.outside_left_out && transient > 0) {
    // No room for the load's peak: make it for what is outside the footprints.
    plan = PlanEviction(candidates, CommittedLocked(), outside_, need, budget);
  }
  if (plan.outside_left_out && !outside_left_out_) {
    spdlog::warn(
        "memory budget: {} of resident memory outside the models' footprints (caches, "
        "allocator free lists, activations) leaves no room under the budget of {} even with "
        "every idle model evicted; until it does, the budget holds the footprints only",
        FormatBytes(outside_), FormatBytes(budget));
  }
  outside_left_out_ = plan.outside_left_out;
  *fits = plan.fits;
  if (!plan.fits && why_not) {
    *why_not = "the memory budget (" + FormatBytes(budget) + ") cannot make room for " +
               FormatBytes(need) + ": " + FormatBytes(CommittedLocked()) + " is committed (" +
               FormatBytes(busy) + " by models with requests in flight or loading, " +
               FormatBytes(pinned) + " by pinned models, " + FormatBytes(reserved_) +
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
                 FormatBytes(e.resident_bytes), MillisBetween(e.lru_time, now), keep);
    for (auto& [v, slot] : e.versions) {
      if (!slot.handle) continue;
      auto charge = charges_.find(slot.serial);
      if (charge != charges_.end() && !charge->second.evicting) {
        charge->second.evicting = true;
        evicting_ += charge->second.bytes;
      }
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
  int64_t loaded = 0;
  for (const auto& [serial, c] : charges_) loaded += c.retired || c.evicting ? 0 : 1;
  metrics_->loaded->Set(static_cast<double>(loaded));
  metrics_->resident_bytes->Set(static_cast<double>(resident_));
  metrics_->outside_bytes->Set(static_cast<double>(outside_));
}

void Lifecycle::MeasureOutside() {
  if (!options_.resident_bytes) return;
  for (int pass = 0; pass < 2; ++pass) {
    const int64_t now = options_.resident_bytes();
    MutexLock lock(&mu_);
    if (reserved_ > 0) return;
    outside_ = std::max<int64_t>(0, now - base_resident_ - resident_);
    UpdateGaugesLocked();
    if (pass == 1) {
      outside_after_release_ = outside_;
      return;
    }
    // The backend's caches keep memory for every distinct model ever run: drop
    // them when what is outside the footprints grew by a tenth of the budget
    // since they were last dropped, or when no model is resident.
    const bool grew = options_.memory_budget > 0 &&
                      outside_ > outside_after_release_ + options_.memory_budget / 10;
    // With nothing resident, also when a release came while models were
    // resident (which recycles no thread) and models were resident since the
    // threads were last recycled.
    const bool empty =
        resident_ == 0 && (outside_ > outside_after_release_ || resident_since_recycle_);
    if (!grew && !empty) return;
    spdlog::info(
        "memory outside the models' footprints: {} ({} after the last release, {} models' "
        "bytes resident): dropping oneDNN's caches{}",
        FormatBytes(outside_), FormatBytes(outside_after_release_), FormatBytes(resident_),
        empty ? ", recycling the load and executor threads" : "");
    // What libtorch keeps per thread for every model a load thread warmed up
    // or an executor ran goes with the thread: each is replaced after its
    // current job (LoadPool, Scheduler::RecycleExecutors). Only with nothing
    // resident: the caches also serve reloads (verifying the known variant),
    // which were 7-13% slower at the median with a recycle at every growth
    // (docs/performance/model-cache.md), and a resident model's batches.
    const bool recycle = empty && accepting_jobs_;
    if (recycle) {
      pool_->Recycle();
      resident_since_recycle_ = false;
    }
    lock.Unlock();
    if (recycle && options_.scheduler) options_.scheduler->RecycleExecutors(options_.release_memory);
    if (options_.backend) options_.backend->ReleaseCaches();
    if (options_.release_memory) options_.release_memory();
    if (metrics_) metrics_->cache_releases->Increment();
  }
}

}  // namespace inferd::repository::internal
