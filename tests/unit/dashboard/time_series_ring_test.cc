#include "dashboard/time_series_ring.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace inferd::dashboard {
namespace {

TEST(TimeSeriesRing, KeepsTheNewestSamplesOldestFirst) {
  TimeSeriesRing ring(3);
  EXPECT_TRUE(ring.empty());
  EXPECT_TRUE(std::isnan(ring.Latest()));
  ring.Push(1);
  ring.Push(2);
  EXPECT_EQ(ring.Values(), (std::vector<float>{1, 2}));
  ring.Push(3);
  ring.Push(4);
  ring.Push(5);
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring.capacity(), 3u);
  EXPECT_EQ(ring.Values(), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(ring.Latest(), 5);
}

TEST(TimeSeriesRing, StaysBoundedOverManyPushes) {
  TimeSeriesRing ring(300);
  for (int i = 0; i < 100000; ++i) ring.Push(i);
  auto v = ring.Values();
  ASSERT_EQ(v.size(), 300u);
  EXPECT_EQ(v.front(), 99700);
  EXPECT_EQ(v.back(), 99999);
}

TEST(TimeSeriesRing, KeepsGapsAsNaN) {
  TimeSeriesRing ring(4);
  ring.Push(1);
  ring.Push(std::numeric_limits<double>::quiet_NaN());
  ring.Push(2);
  auto v = ring.Values();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_TRUE(std::isnan(v[1]));
}

TEST(TimeSeriesRing, ZeroCapacityHoldsOne) {
  TimeSeriesRing ring(0);
  ring.Push(7);
  ring.Push(8);
  EXPECT_EQ(ring.Values(), (std::vector<float>{8}));
}

}  // namespace
}  // namespace inferd::dashboard
