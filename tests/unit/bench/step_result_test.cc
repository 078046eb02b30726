#include "bench/step_result.h"

#include <gtest/gtest.h>

#include <vector>

namespace inferd::bench {
namespace {

TEST(SummarizeSamples, FailuresAreCountedNotTimed) {
  const TimePoint t0{};
  std::vector<Sample> samples = {
      {t0, 10, 200},
      {t0, 20, 200},
      {t0, 30, 201},
      {t0, 0.1, 503},
      {t0, 0.2, 503},
      {t0, 5, 404},
      {t0, 1, kConnectionError},
      {t0, 30000, kTimeout},
  };
  StepResult step;
  SummarizeSamples(samples, 2.0, &step);
  EXPECT_EQ(step.requests, 8u);
  EXPECT_EQ(step.successes, 3u);
  EXPECT_EQ(step.failures, 5u);
  EXPECT_EQ(step.failures_by_status.at(503), 2u);
  EXPECT_EQ(step.failures_by_status.at(404), 1u);
  EXPECT_EQ(step.failures_by_status.at(kConnectionError), 1u);
  EXPECT_EQ(step.failures_by_status.at(kTimeout), 1u);
  // Fast 503s must not make the server look fast.
  EXPECT_DOUBLE_EQ(step.requests_per_s, 1.5);
  EXPECT_EQ(step.latency.count, 3u);
  EXPECT_EQ(step.latency.min_ms, 10);
  EXPECT_EQ(step.latency.p50_ms, 20);
  EXPECT_DOUBLE_EQ(step.measured_s, 2.0);
  EXPECT_EQ(FormatFailures(step.failures_by_status), "timeout:1 conn:1 404:1 503:2");
}

TEST(WindowStatsOf, SuccessesOnly) {
  const TimePoint t0{};
  std::vector<Sample> window = {{t0, 4, 200}, {t0, 8, 200}, {t0, 6, 200}, {t0, 1, 500}};
  const WindowStats w = WindowStatsOf(window, 0.5);
  EXPECT_DOUBLE_EQ(w.requests_per_s, 6.0);
  EXPECT_EQ(w.p50_ms, 6);
  EXPECT_EQ(WindowStatsOf({}, 1.0).requests_per_s, 0);
}

TEST(FailureName, Names) {
  EXPECT_EQ(FailureName(kConnectionError), "conn");
  EXPECT_EQ(FailureName(kTimeout), "timeout");
  EXPECT_EQ(FailureName(429), "429");
  EXPECT_EQ(FormatFailures({}), "-");
}

}  // namespace
}  // namespace inferd::bench
