// Sizes and instants as tests write them: kMiB, kGi, At(ms). One definition
// for every test file (the files of a folder share a unity batch, where a
// helper defined twice would clash).
#pragma once

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace inferd::test_support {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGi = int64_t{1} << 30;

// The instant `ms` milliseconds after the clock's zero.
inline TimePoint At(int ms) { return TimePoint() + std::chrono::milliseconds(ms); }

}  // namespace inferd::test_support
