#include "bench/arrival_schedule.h"

#include <cmath>
#include <string>

namespace inferd::bench {

StatusOr<ArrivalSchedule> ArrivalSchedule::Create(double rate_per_s, Arrivals arrivals,
                                                  std::uint64_t seed) {
  if (!(rate_per_s > 0) || !std::isfinite(rate_per_s)) {
    return InvalidArgument("--rate: expected a positive number of requests/s, got " +
                           std::to_string(rate_per_s));
  }
  return ArrivalSchedule(rate_per_s, arrivals, seed);
}

std::chrono::nanoseconds ArrivalSchedule::Next() {
  double at_s;
  if (arrivals_ == Arrivals::kConstant) {
    at_s = static_cast<double>(index_++) / rate_;
  } else {
    // Inverse-CDF sampling with our own uniform draw (53 random bits), so the
    // sequence for a seed does not depend on the standard library's
    // distribution implementation.
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
    poisson_now_s_ += -std::log1p(-u) / rate_;
    at_s = poisson_now_s_;
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(at_s * 1e9)));
}

}  // namespace inferd::bench
