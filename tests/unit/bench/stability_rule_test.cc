#include "bench/stability_rule.h"

#include <gtest/gtest.h>

#include <vector>

namespace inferd::bench {
namespace {

TEST(StabilityRule, NeedsEnoughWindows) {
  const StabilityRule rule;  // 3 windows, 10%
  std::vector<WindowStats> h = {{100, 10}, {100, 10}};
  EXPECT_FALSE(rule.IsStable(h));
  h.push_back({100, 10});
  EXPECT_TRUE(rule.IsStable(h));
}

TEST(StabilityRule, ThroughputSpreadBeyondTolerance) {
  const StabilityRule rule;
  EXPECT_TRUE(rule.IsStable(std::vector<WindowStats>{{95, 10}, {100, 10}, {91, 10}}));   // 9%
  EXPECT_FALSE(rule.IsStable(std::vector<WindowStats>{{95, 10}, {100, 10}, {89, 10}}));  // 11%
}

TEST(StabilityRule, LatencySpreadBeyondTolerance) {
  const StabilityRule rule;
  EXPECT_TRUE(rule.IsStable(std::vector<WindowStats>{{100, 20}, {100, 19}, {100, 18.5}}));
  EXPECT_FALSE(rule.IsStable(std::vector<WindowStats>{{100, 20}, {100, 19}, {100, 17.5}}));
}

TEST(StabilityRule, OnlyTheLastWindowsCount) {
  const StabilityRule rule;
  // A warm-up-like first window far off, then three that agree.
  EXPECT_TRUE(rule.IsStable(std::vector<WindowStats>{{10, 90}, {100, 10}, {101, 10}, {99, 10}}));
  // Three that agreed, then one that does not: not stable any more.
  EXPECT_FALSE(rule.IsStable(std::vector<WindowStats>{{100, 10}, {101, 10}, {99, 10}, {50, 10}}));
}

TEST(StabilityRule, ConfigurableWindowsAndTolerance) {
  const StabilityRule one{1, 0.0};
  EXPECT_TRUE(one.IsStable(std::vector<WindowStats>{{123, 4}}));
  const StabilityRule strict{2, 0.01};
  EXPECT_FALSE(strict.IsStable(std::vector<WindowStats>{{100, 10}, {98, 10}}));
  EXPECT_TRUE(strict.IsStable(std::vector<WindowStats>{{100, 10}, {99.5, 10}}));
}

TEST(StabilityRule, AllZeroIsStable) {
  // A server that answers nothing (all failures) settles at 0 instead of
  // running to the window cap.
  EXPECT_TRUE(StabilityRule{}.IsStable(std::vector<WindowStats>{{0, 0}, {0, 0}, {0, 0}}));
}

TEST(WithinTolerance, Definition) {
  EXPECT_TRUE(WithinTolerance(std::vector<double>{90, 100}, 0.10));
  EXPECT_FALSE(WithinTolerance(std::vector<double>{89.9, 100}, 0.10));
  EXPECT_TRUE(WithinTolerance(std::vector<double>{}, 0.10));
}

}  // namespace
}  // namespace inferd::bench
