// ArrivalSchedule: the intended send times of an open-loop load step.
//
// An open-loop client sends at times fixed in advance, whatever the server
// does; latency is then measured from the intended time, so a request that
// waits for a free connection (because the server is slow) carries that wait in
// its latency. This is what keeps a benchmark free of coordinated omission.
//
// Constant arrivals: the i-th request is intended at i / rate (computed from i,
// not summed, so no drift). Poisson arrivals: exponential gaps with mean
// 1 / rate drawn from a seeded generator, so a run is reproducible.
//
// Thread-safety: none; one owner calls Next() in order.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "common/status.h"

namespace inferd::bench {

enum class Arrivals { kConstant, kPoisson };

class ArrivalSchedule {
 public:
  // rate_per_s must be positive and finite.
  static StatusOr<ArrivalSchedule> Create(double rate_per_s, Arrivals arrivals,
                                          std::uint64_t seed = 1);

  // The offset from the step's start of the next arrival (the first is 0 for
  // constant arrivals, one exponential gap for Poisson). Never decreases.
  std::chrono::nanoseconds Next();

 private:
  ArrivalSchedule(double rate_per_s, Arrivals arrivals, std::uint64_t seed)
      : rate_(rate_per_s), arrivals_(arrivals), rng_(seed) {}

  double rate_;
  Arrivals arrivals_;
  std::mt19937_64 rng_;
  std::uint64_t index_ = 0;   // constant: arrivals handed out so far
  double poisson_now_s_ = 0;  // Poisson: the last arrival, seconds from start
};

}  // namespace inferd::bench
