#include "dashboard/histogram_quantile.h"

#include <gtest/gtest.h>

#include <cmath>

namespace inferd::dashboard {
namespace {

const std::vector<double> kBounds = {1, 2, 4};

TEST(HistogramQuantile, InterpolatesInsideTheBucket) {
  // 10 in (0,1], 10 in (1,2], none above.
  const std::vector<uint64_t> c = {10, 20, 20, 20};
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.5, kBounds, c), 1.0);
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.25, kBounds, c), 0.5);
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.75, kBounds, c), 1.5);
  EXPECT_DOUBLE_EQ(HistogramQuantile(1.0, kBounds, c), 2.0);
}

TEST(HistogramQuantile, RankInTheInfBucketAnswersTheHighestBound) {
  const std::vector<uint64_t> c = {0, 0, 1, 100};
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.99, kBounds, c), 4.0);
}

TEST(HistogramQuantile, EmptyOrMismatchedIsNaN) {
  EXPECT_TRUE(std::isnan(HistogramQuantile(0.5, kBounds, {0, 0, 0, 0})));
  EXPECT_TRUE(std::isnan(HistogramQuantile(0.5, kBounds, {1, 2})));
}

TEST(CountsBetween, SubtractsAndTreatsAResetAsNew) {
  EXPECT_EQ(CountsBetween({1, 2, 3}, {2, 4, 6}), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(CountsBetween({5, 5, 5}, {1, 1, 2}), (std::vector<uint64_t>{1, 1, 2}));
  EXPECT_EQ(CountsBetween({}, {1, 2}), (std::vector<uint64_t>{1, 2}));
}

}  // namespace
}  // namespace inferd::dashboard
