#include "bench/percentiles.h"

#include <gtest/gtest.h>

#include <vector>

namespace inferd::bench {
namespace {

std::vector<double> OneToHundred() {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  return v;
}

TEST(NearestRank, KnownSetOfTen) {
  const std::vector<double> sorted = {15, 20, 35, 40, 50, 55, 60, 70, 80, 95};
  // Ranks: ceil(p/100 * 10).
  EXPECT_EQ(NearestRankPercentile(sorted, 5), 15);
  EXPECT_EQ(NearestRankPercentile(sorted, 30), 35);
  EXPECT_EQ(NearestRankPercentile(sorted, 40), 40);
  EXPECT_EQ(NearestRankPercentile(sorted, 50), 50);
  EXPECT_EQ(NearestRankPercentile(sorted, 51), 55);
  EXPECT_EQ(NearestRankPercentile(sorted, 90), 80);  // exactly rank 9, not 10
  EXPECT_EQ(NearestRankPercentile(sorted, 99), 95);
  EXPECT_EQ(NearestRankPercentile(sorted, 100), 95);
  EXPECT_EQ(NearestRankPercentile(sorted, 0), 15);
}

TEST(NearestRank, WikipediaExample) {
  // The classic nearest-rank example: {15, 20, 35, 40, 50}.
  const std::vector<double> sorted = {15, 20, 35, 40, 50};
  EXPECT_EQ(NearestRankPercentile(sorted, 5), 15);
  EXPECT_EQ(NearestRankPercentile(sorted, 30), 20);
  EXPECT_EQ(NearestRankPercentile(sorted, 40), 20);
  EXPECT_EQ(NearestRankPercentile(sorted, 50), 35);
  EXPECT_EQ(NearestRankPercentile(sorted, 100), 50);
}

TEST(NearestRank, EmptyAndSingle) {
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
  EXPECT_EQ(NearestRankPercentile({7.5}, 1), 7.5);
  EXPECT_EQ(NearestRankPercentile({7.5}, 99), 7.5);
}

TEST(Summarize, OneToHundred) {
  const LatencySummary s = Summarize(OneToHundred());
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.avg_ms, 50.5);
  EXPECT_EQ(s.min_ms, 1);
  EXPECT_EQ(s.max_ms, 100);
  EXPECT_EQ(s.p50_ms, 50);
  EXPECT_EQ(s.p90_ms, 90);
  EXPECT_EQ(s.p95_ms, 95);
  EXPECT_EQ(s.p99_ms, 99);
  EXPECT_EQ(PercentileOf(s, 99), 99);
  EXPECT_EQ(PercentileOf(s, 90), 90);
}

TEST(Summarize, ValuesAreRealSamples) {
  // 1000 samples: 990 at 1 ms and 10 at 500 ms. p99 is rank 990 -> 1 ms;
  // p99.9 would be the outliers. An interpolating method would invent values.
  std::vector<double> v(990, 1.0);
  v.insert(v.end(), 10, 500.0);
  const LatencySummary s = Summarize(v);
  EXPECT_EQ(s.p99_ms, 1.0);
  EXPECT_EQ(s.max_ms, 500.0);
  EXPECT_DOUBLE_EQ(s.avg_ms, (990.0 + 5000.0) / 1000.0);
}

TEST(Summarize, Empty) {
  const LatencySummary s = Summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p99_ms, 0);
}

}  // namespace
}  // namespace inferd::bench
