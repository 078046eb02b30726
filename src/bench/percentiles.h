// Latency summaries over recorded samples: exact, no histogram.
//
// Percentiles use the nearest-rank method: for N sorted samples, the p-th
// percentile (0 < p <= 100) is the sample at 1-based rank ceil(p/100 * N);
// p = 0 gives the minimum. Every reported percentile is therefore a latency
// that some request really had. At the rates a 2-core machine serves (a few
// thousand requests per step) sorting the samples is cheap.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace inferd::bench {

struct LatencySummary {
  std::size_t count = 0;  // samples summarised; all other fields are 0 when 0
  double avg_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p95_ms = 0;
  double p99_ms = 0;
};

// The nearest-rank percentile `p` (0..100) of `sorted` (ascending). 0 if empty.
double NearestRankPercentile(const std::vector<double>& sorted, double p);

// Summarises `latencies_ms` (any order; taken by value and sorted).
LatencySummary Summarize(std::vector<double> latencies_ms);

// The field of `summary` named by `percentile` (50, 90, 95 or 99); max for others >= 100.
double PercentileOf(const LatencySummary& summary, int percentile);

}  // namespace inferd::bench
