#include "bench/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferd::bench {

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  if (p <= 0) return sorted.front();
  if (p >= 100) return sorted.back();
  const double n = static_cast<double>(sorted.size());
  // A tiny epsilon keeps p*N that is an exact integer in exact arithmetic (e.g.
  // 0.9 * 10) from rounding up to the next rank through floating-point error.
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary Summarize(std::vector<double> latencies_ms) {
  LatencySummary s;
  if (latencies_ms.empty()) return s;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  s.count = latencies_ms.size();
  s.avg_ms =
      std::accumulate(latencies_ms.begin(), latencies_ms.end(), 0.0) / static_cast<double>(s.count);
  s.min_ms = latencies_ms.front();
  s.max_ms = latencies_ms.back();
  s.p50_ms = NearestRankPercentile(latencies_ms, 50);
  s.p90_ms = NearestRankPercentile(latencies_ms, 90);
  s.p95_ms = NearestRankPercentile(latencies_ms, 95);
  s.p99_ms = NearestRankPercentile(latencies_ms, 99);
  return s;
}

double PercentileOf(const LatencySummary& summary, int percentile) {
  switch (percentile) {
    case 50:
      return summary.p50_ms;
    case 90:
      return summary.p90_ms;
    case 95:
      return summary.p95_ms;
    case 99:
      return summary.p99_ms;
    default:
      return percentile >= 100 ? summary.max_ms : summary.p50_ms;
  }
}

}  // namespace inferd::bench
