// WindowedMeasurement driven by made-up completion times: no clock, no sleeps.
#include "bench/windowed_measurement.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace inferd::bench {
namespace {

using std::chrono::milliseconds;
const TimePoint kT0{};  // the injected epoch

// `per_window[k]` successes of `latency_ms[k]` spread evenly over window k
// (1 s windows starting at kT0 + 1 s, after a 1 s warm-up with 5 samples).
std::vector<Sample> Load(const std::vector<int>& per_window,
                         const std::vector<double>& latency_ms) {
  std::vector<Sample> samples;
  for (int i = 0; i < 5; ++i) samples.push_back({kT0 + milliseconds(i * 200), 999, 200});
  for (std::size_t k = 0; k < per_window.size(); ++k) {
    for (int i = 0; i < per_window[k]; ++i) {
      const auto at = kT0 + milliseconds(1000 * (k + 1) + i * 1000 / per_window[k]);
      samples.push_back({at, latency_ms[k], 200});
    }
  }
  return samples;
}

TEST(WindowedMeasurement, WindowBoundaries) {
  WindowedMeasurement m(kT0 + milliseconds(1000), milliseconds(1000), StabilityRule{}, 10);
  EXPECT_EQ(m.NextWindowEnd(), kT0 + milliseconds(2000));
  const std::vector<Sample> samples = Load({10, 20}, {5, 5});
  EXPECT_FALSE(m.CloseWindow(samples));
  EXPECT_EQ(m.NextWindowEnd(), kT0 + milliseconds(3000));
  ASSERT_EQ(m.history().size(), 1u);
  EXPECT_DOUBLE_EQ(m.history()[0].requests_per_s, 10);  // warm-up samples left out
  EXPECT_FALSE(m.CloseWindow(samples));
  EXPECT_DOUBLE_EQ(m.history()[1].requests_per_s, 20);
}

TEST(WindowedMeasurement, EndsWhenThreeWindowsAgreeAndReportsThem) {
  // Window 0 is slow to settle; windows 1-3 agree within 10%.
  const std::vector<Sample> samples = Load({40, 100, 96, 104, 50}, {30, 10, 10.5, 10.2, 99});
  WindowedMeasurement m(kT0 + milliseconds(1000), milliseconds(1000), StabilityRule{}, 10);
  int closes = 0;
  while (!m.CloseWindow(samples)) ++closes;
  EXPECT_EQ(closes + 1, 4);
  EXPECT_TRUE(m.stable());
  StepResult step;
  m.Summarize(samples, &step);
  EXPECT_TRUE(step.stable);
  EXPECT_EQ(step.windows_run, 4);
  EXPECT_EQ(step.requests, 300u);  // windows 1-3 only
  EXPECT_DOUBLE_EQ(step.measured_s, 3.0);
  EXPECT_DOUBLE_EQ(step.requests_per_s, 100.0);
  EXPECT_EQ(step.latency.max_ms, 10.5);  // not window 0's 30 ms, nor the warm-up's 999
}

TEST(WindowedMeasurement, StopsAtTheCapUnstable) {
  const std::vector<Sample> samples = Load({10, 20, 40, 80, 160}, {1, 2, 4, 8, 16});
  WindowedMeasurement m(kT0 + milliseconds(1000), milliseconds(1000), StabilityRule{}, 5);
  int closes = 0;
  while (!m.CloseWindow(samples)) ++closes;
  EXPECT_EQ(closes + 1, 5);
  EXPECT_FALSE(m.stable());
  StepResult step;
  m.Summarize(samples, &step);
  EXPECT_FALSE(step.stable);
  EXPECT_EQ(step.requests, 40u + 80u + 160u);  // still the last three windows
}

TEST(WindowedMeasurement, OneFixedWindow) {
  const std::vector<Sample> samples = Load({7, 9}, {3, 3});
  WindowedMeasurement m(kT0 + milliseconds(1000), milliseconds(1000), StabilityRule{1, 0.1}, 1);
  EXPECT_TRUE(m.CloseWindow(samples));
  StepResult step;
  m.Summarize(samples, &step);
  EXPECT_EQ(step.requests, 7u);
}

TEST(WindowedMeasurement, FailuresCountButAreNotThroughput) {
  std::vector<Sample> samples;
  for (int i = 0; i < 10; ++i) {
    samples.push_back({kT0 + milliseconds(100 * i), 0.01, i % 2 ? 503 : 200});
  }
  WindowedMeasurement m(kT0, milliseconds(1000), StabilityRule{1, 0.1}, 1);
  EXPECT_TRUE(m.CloseWindow(samples));
  StepResult step;
  m.Summarize(samples, &step);
  EXPECT_EQ(step.requests, 10u);
  EXPECT_EQ(step.failures_by_status.at(503), 5u);
  EXPECT_DOUBLE_EQ(step.requests_per_s, 5.0);
}

TEST(FirstAtOrAfter, Boundary) {
  const std::vector<Sample> s = {{kT0 + milliseconds(1), 0, 200},
                                 {kT0 + milliseconds(2), 0, 200},
                                 {kT0 + milliseconds(2), 0, 200},
                                 {kT0 + milliseconds(3), 0, 200}};
  EXPECT_EQ(FirstAtOrAfter(s, kT0), 0u);
  EXPECT_EQ(FirstAtOrAfter(s, kT0 + milliseconds(2)), 1u);
  EXPECT_EQ(FirstAtOrAfter(s, kT0 + milliseconds(4)), 4u);
}

}  // namespace
}  // namespace inferd::bench
