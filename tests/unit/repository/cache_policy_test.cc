#include "repository/cache_policy.h"

#include <gtest/gtest.h>

#include "unit/support/test_units.h"

namespace inferd::repository {
namespace {

using test_support::At;

TEST(CachePolicy, NothingIsEvictedWhenTheLoadFits) {
  auto plan = PlanEviction({{"a", 10, At(1)}}, 50, 50, 100);
  EXPECT_TRUE(plan.fits);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_TRUE(PlanEviction({{"a", 10, At(1)}}, 1000, 1000, 0).fits) << "no budget";
}

TEST(CachePolicy, LeastRecentlyUsedFirstUntilItFits) {
  std::vector<CacheEntry> c = {{"new", 30, At(9)}, {"old", 30, At(1)}, {"mid", 30, At(5)}};
  auto plan = PlanEviction(c, 90, 40, 100);  // must free 30
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"old"}));
  EXPECT_EQ(plan.freed_bytes, 30);
  plan = PlanEviction(c, 90, 60, 100);  // must free 50
  EXPECT_EQ(plan.victims, std::vector<std::string>({"old", "mid"}));
}

TEST(CachePolicy, TiesAreBrokenByName) {
  auto plan = PlanEviction({{"b", 10, At(1)}, {"a", 10, At(1)}}, 100, 5, 100);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"a"}));
}

TEST(CachePolicy, WhenEvictingEverythingIsNotEnoughNothingIsEvicted) {
  auto plan = PlanEviction({{"a", 10, At(1)}, {"b", 10, At(2)}}, 100, 50, 100);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_EQ(plan.freed_bytes, 0);
}

TEST(CachePolicy, ANeedOfZeroBringsAnOverfullCacheBackUnderTheBudget) {
  auto plan = PlanEviction({{"a", 10, At(1)}, {"b", 10, At(2)}}, 115, 0, 100);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"a", "b"}));
}

TEST(CachePolicy, MemoryOutsideTheFootprintsIsMadeRoomForLikeALoad) {
  std::vector<CacheEntry> c = {{"new", 30, At(9)}, {"old", 30, At(1)}, {"mid", 30, At(5)}};
  // 60 committed + 30 needed fit 100 alone; 25 outside them do not.
  auto plan = PlanEviction(c, 60, 25, 30, 100);
  EXPECT_TRUE(plan.fits);
  EXPECT_FALSE(plan.outside_left_out);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"old"}));
  plan = PlanEviction(c, 60, 0, 30, 100);
  EXPECT_TRUE(plan.victims.empty()) << "nothing outside: the footprints fit";
}

TEST(CachePolicy, WhenNoEvictionMakesRoomForTheOutsideTheFootprintsDecide) {
  std::vector<CacheEntry> c = {{"a", 10, At(1)}, {"b", 10, At(2)}};
  // 95 outside: even with a and b gone, 95 + 10 > 100.
  auto plan = PlanEviction(c, 20, 95, 10, 100);
  EXPECT_TRUE(plan.fits);
  EXPECT_TRUE(plan.outside_left_out);
  EXPECT_TRUE(plan.victims.empty()) << "the footprints fit: no model is evicted for nothing";
  plan = PlanEviction(c, 95, 90, 10, 100);
  EXPECT_TRUE(plan.outside_left_out);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"a"})) << "what the footprints need";
}

}  // namespace
}  // namespace inferd::repository
