#include "topology/cpu_list.h"

#include <gtest/gtest.h>

namespace inferd::topology {
namespace {

using V = std::vector<int>;

TEST(CpuListTest, ParsesRangesAndSingles) {
  auto cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_EQ(*cpus, (V{0, 1, 2, 3, 8, 10, 11}));
}

TEST(CpuListTest, SortsAndDeduplicates) {
  auto cpus = ParseCpuList(" 6, 2-4 ,3 ");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (V{2, 3, 4, 6}));
}

TEST(CpuListTest, EmptyIsEmpty) {
  auto cpus = ParseCpuList("\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_TRUE(cpus->empty());
}

TEST(CpuListTest, RejectsMalformed) {
  for (const char* bad : {"3-1", "a", "1,,2", "1,", "-1", "1-", "0-3x"}) {
    auto cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << bad;
    if (!cpus.ok()) {
      EXPECT_EQ(cpus.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(CpuListTest, FormatsCompactly) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({5}), "5");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuListTest, Intersects) { EXPECT_EQ(IntersectCpus({0, 1, 2, 5}, {1, 5, 7}), (V{1, 5})); }

}  // namespace
}  // namespace inferd::topology
