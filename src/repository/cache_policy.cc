#include "repository/cache_policy.h"

#include <algorithm>

namespace inferd::repository {

EvictionPlan PlanEviction(std::vector<CacheEntry> candidates, int64_t committed, int64_t need,
                          int64_t budget) {
  EvictionPlan plan;
  if (budget <= 0 || committed + need <= budget) {
    plan.fits = true;
    return plan;
  }
  // Oldest use first; the name breaks ties so that the order is reproducible.
  std::sort(candidates.begin(), candidates.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.name < b.name;
  });
  for (const CacheEntry& c : candidates) {
    if (committed - plan.freed_bytes + need <= budget) break;
    plan.victims.push_back(c.name);
    plan.freed_bytes += c.bytes;
  }
  plan.fits = committed - plan.freed_bytes + need <= budget;
  if (!plan.fits) {
    plan.victims.clear();
    plan.freed_bytes = 0;
  }
  return plan;
}

EvictionPlan PlanEviction(const std::vector<CacheEntry>& candidates, int64_t committed,
                          int64_t outside, int64_t need, int64_t budget) {
  if (outside > 0) {
    EvictionPlan plan = PlanEviction(candidates, committed + outside, need, budget);
    if (plan.fits) return plan;
  }
  EvictionPlan plan = PlanEviction(candidates, committed, need, budget);
  plan.outside_left_out = outside > 0;
  return plan;
}

}  // namespace inferd::repository
