#include "bench/arrival_schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace inferd::bench {
namespace {

using std::chrono::nanoseconds;

TEST(ArrivalSchedule, RejectsBadRates) {
  EXPECT_FALSE(ArrivalSchedule::Create(0, Arrivals::kConstant).ok());
  EXPECT_FALSE(ArrivalSchedule::Create(-5, Arrivals::kPoisson).ok());
  EXPECT_FALSE(ArrivalSchedule::Create(INFINITY, Arrivals::kConstant).ok());
  EXPECT_FALSE(ArrivalSchedule::Create(NAN, Arrivals::kConstant).ok());
}

TEST(ArrivalSchedule, ConstantRateIntendedTimes) {
  auto s = ArrivalSchedule::Create(4, Arrivals::kConstant);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Next(), nanoseconds(0));
  EXPECT_EQ(s->Next(), nanoseconds(250'000'000));
  EXPECT_EQ(s->Next(), nanoseconds(500'000'000));
  EXPECT_EQ(s->Next(), nanoseconds(750'000'000));
  EXPECT_EQ(s->Next(), nanoseconds(1'000'000'000));
}

TEST(ArrivalSchedule, ConstantRateDoesNotDrift) {
  // 1/3 s is not representable; times are computed from the index, so the
  // 300000th arrival is at exactly 100000 s (to the nanosecond).
  auto s = ArrivalSchedule::Create(3, Arrivals::kConstant);
  ASSERT_TRUE(s.ok());
  nanoseconds last{};
  for (int i = 0; i <= 300'000; ++i) last = s->Next();
  EXPECT_EQ(last, nanoseconds(100'000LL * 1'000'000'000LL));
}

TEST(ArrivalSchedule, PoissonMeanGapMatchesRate) {
  constexpr double kRate = 200;
  constexpr int kN = 200'000;
  auto s = ArrivalSchedule::Create(kRate, Arrivals::kPoisson, /*seed=*/42);
  ASSERT_TRUE(s.ok());
  nanoseconds prev{0};
  double sum = 0, sum_sq = 0;
  int below_mean = 0;
  for (int i = 0; i < kN; ++i) {
    const nanoseconds t = s->Next();
    ASSERT_GE(t, prev);
    const double gap_s = std::chrono::duration<double>(t - prev).count();
    sum += gap_s;
    sum_sq += gap_s * gap_s;
    if (gap_s < 1 / kRate) ++below_mean;
    prev = t;
  }
  const double mean = sum / kN;
  const double sd = std::sqrt(sum_sq / kN - mean * mean);
  // Mean 1/rate: standard error is mean/sqrt(N) ~ 0.22%; allow 2%.
  EXPECT_NEAR(mean, 1 / kRate, 0.02 / kRate);
  // Exponential: standard deviation equals the mean (a constant schedule would give 0).
  EXPECT_NEAR(sd, 1 / kRate, 0.03 / kRate);
  // P(gap < mean) = 1 - 1/e ~ 0.632.
  EXPECT_NEAR(static_cast<double>(below_mean) / kN, 1 - std::exp(-1.0), 0.01);
}

TEST(ArrivalSchedule, PoissonIsReproducibleForASeed) {
  auto a = ArrivalSchedule::Create(50, Arrivals::kPoisson, 7);
  auto b = ArrivalSchedule::Create(50, Arrivals::kPoisson, 7);
  auto c = ArrivalSchedule::Create(50, Arrivals::kPoisson, 8);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const nanoseconds ta = a->Next();
    EXPECT_EQ(ta, b->Next());
    if (ta != c->Next()) differs = true;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace inferd::bench
