// Which models to unload so that a load fits the memory budget: least
// recently used first, only among the models that may be evicted.
//
// Pure logic (no clock, no locks), so that the policy is unit-tested alone;
// the repository decides what is evictable (READY, no request queued or
// running, no handle held outside the repository, not pinned, no load or
// unload running) and calls this under its own lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"

namespace inferd::repository {

struct CacheEntry {
  std::string name;
  int64_t bytes = 0;      // what unloading it frees (its resident footprint)
  TimePoint last_used{};  // its last request, or when it finished loading
};

struct EvictionPlan {
  std::vector<std::string> victims;  // least recently used first
  int64_t freed_bytes = 0;
  bool fits = false;  // committed - freed_bytes + need <= budget
  // The plan left `outside` out: not even evicting every candidate made room
  // with it (see below).
  bool outside_left_out = false;
};

// `committed`: bytes the budget already carries (resident models and loads in
// progress); `need`: the new load's estimate. With budget <= 0 (no budget)
// everything fits. When even evicting every candidate would not make room,
// the plan evicts nothing and says fits = false.
EvictionPlan PlanEviction(std::vector<CacheEntry> candidates, int64_t committed, int64_t need,
                          int64_t budget);

// The same, with `outside` on the budget too: resident memory above the
// server's base that no resident footprint accounts for (what loads and
// requests leave behind once their models are gone: the backend's caches,
// the allocator's free lists, activations), measured from the process's
// resident memory. Models are evicted to make room for it as for a load, so
// that resident memory stays within base + budget. When even evicting every
// candidate would not make room with it, the plan is PlanEviction's without
// it (outside_left_out): eviction cannot free that memory, and a load that
// fits the footprints is not refused for it.
EvictionPlan PlanEviction(const std::vector<CacheEntry>& candidates, int64_t committed,
                          int64_t outside, int64_t need, int64_t budget);

}  // namespace inferd::repository
