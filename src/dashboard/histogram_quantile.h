// Quantiles from the registry's cumulative histograms, the way Prometheus's
// histogram_quantile() reads them: find the bucket that holds the rank and
// interpolate linearly inside it (the first bucket from 0; a rank in the +Inf
// bucket answers the highest finite bound). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace inferd::dashboard {

// `cumulative` per bound then +Inf (metrics::Histogram::CumulativeCounts);
// `q` in [0, 1]. NaN when the histogram is empty or the sizes disagree.
double HistogramQuantile(double q, const std::vector<double>& upper_bounds,
                         const std::vector<uint64_t>& cumulative);

// `now - before`, bucket by bucket: the observations between two readings of
// one series. A series that went back (removed and made again) reads as
// `now` alone; sizes that disagree give `now`.
std::vector<uint64_t> CountsBetween(const std::vector<uint64_t>& before,
                                    const std::vector<uint64_t>& now);

}  // namespace inferd::dashboard
