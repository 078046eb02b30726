#include "bench/stability_rule.h"

#include <algorithm>
#include <vector>

namespace inferd::bench {

bool WithinTolerance(std::span<const double> values, double tolerance) {
  if (values.empty()) return true;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return (*hi - *lo) <= tolerance * *hi;
}

bool StabilityRule::IsStable(std::span<const WindowStats> history) const {
  const auto n = static_cast<std::size_t>(std::max(windows, 1));
  if (history.size() < n) return false;
  std::vector<double> rates, p50s;
  for (const WindowStats& w : history.last(n)) {
    rates.push_back(w.requests_per_s);
    p50s.push_back(w.p50_ms);
  }
  return WithinTolerance(rates, tolerance) && WithinTolerance(p50s, tolerance);
}

}  // namespace inferd::bench
