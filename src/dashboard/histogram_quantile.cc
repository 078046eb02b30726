#include "dashboard/histogram_quantile.h"

#include <cstddef>
#include <limits>

namespace inferd::dashboard {

double HistogramQuantile(double q, const std::vector<double>& upper_bounds,
                         const std::vector<uint64_t>& cumulative) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (cumulative.size() != upper_bounds.size() + 1 || cumulative.back() == 0) return nan;
  if (q < 0) q = 0;
  if (q > 1) q = 1;
  const double rank = q * static_cast<double>(cumulative.back());
  size_t i = 0;
  while (i < cumulative.size() && static_cast<double>(cumulative[i]) < rank) ++i;
  if (i >= upper_bounds.size()) return upper_bounds.empty() ? nan : upper_bounds.back();
  const double lower = i == 0 ? 0 : upper_bounds[i - 1];
  const double below = i == 0 ? 0 : static_cast<double>(cumulative[i - 1]);
  const double in_bucket = static_cast<double>(cumulative[i]) - below;
  if (in_bucket <= 0) return upper_bounds[i];
  return lower + (upper_bounds[i] - lower) * (rank - below) / in_bucket;
}

std::vector<uint64_t> CountsBetween(const std::vector<uint64_t>& before,
                                    const std::vector<uint64_t>& now) {
  if (before.size() != now.size()) return now;
  std::vector<uint64_t> out(now.size());
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i] < before[i]) return now;  // a reset: the series started again
    out[i] = now[i] - before[i];
  }
  return out;
}

}  // namespace inferd::dashboard
