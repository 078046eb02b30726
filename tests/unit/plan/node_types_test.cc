#include "plan/node_types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "unit/support/test_units.h"

namespace inferd::plan {
namespace {

using ::testing::HasSubstr;

using test_support::kGi;

PackItem Item(double cores, int64_t memory) {
  PackItem it;
  it.cores = cores;
  it.memory_bytes = memory;
  return it;
}

// The issue's three types: 16 cores/32G at 0.68, 8/64G at 0.50, 4/128G at 0.80.
std::vector<NodeType> IssueTypes() {
  return {{"a", 16, 32 * kGi, 0.68}, {"b", 8, 64 * kGi, 0.50}, {"c", 4, 128 * kGi, 0.80}};
}

TEST(ParseNodeTypeTest, ReadsTheFourFields) {
  auto t = ParseNodeType("c5-4xl:16:32Gi:0.68");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "c5-4xl");
  EXPECT_EQ(t->cores, 16);
  EXPECT_EQ(t->memory_bytes, 32 * kGi);
  EXPECT_DOUBLE_EQ(t->price, 0.68);
}

TEST(ParseNodeTypeTest, NamesTheWrongField) {
  EXPECT_THAT(ParseNodeType("a:16:32Gi").status().message(), HasSubstr("NAME:CORES:MEMORY:PRICE"));
  EXPECT_THAT(ParseNodeType("A_1:16:32Gi:1").status().message(), HasSubstr("label value"));
  EXPECT_THAT(ParseNodeType("a:x:32Gi:1").status().message(), HasSubstr("CORES"));
  EXPECT_THAT(ParseNodeType("a:16:32Qi:1").status().message(), HasSubstr("MEMORY"));
  EXPECT_THAT(ParseNodeType("a:16:32Gi:0").status().message(), HasSubstr("PRICE"));
  EXPECT_THAT(ParseNodeType("a:16:32Gi:-1").status().message(), HasSubstr("PRICE"));
}

TEST(ValidateNodeTypesTest, RefusesRepeatedNamesAndBadHeadroom) {
  std::vector<NodeType> types = IssueTypes();
  EXPECT_TRUE(ValidateNodeTypes(types, 0.2).ok());
  EXPECT_THAT(ValidateNodeTypes(types, 1.0).message(), HasSubstr("headroom"));
  types.push_back(types[0]);
  EXPECT_THAT(ValidateNodeTypes(types, 0.2).message(), HasSubstr("twice"));
  EXPECT_FALSE(ValidateNodeTypes({}, 0.2).ok());
}

TEST(CostBoundTest, OneTypeIsItsVolumeBound) {
  // 30 cores and 20 GiB on 10-core, 100 GiB nodes at 2/h, no headroom: 3 nodes' worth.
  std::vector<NodeType> types = {{"x", 10, 100 * kGi, 2.0}};
  CostBound b = ComputeCostBound({Item(12, 10 * kGi), Item(18, 10 * kGi)}, types, 0);
  EXPECT_NEAR(b.cost, 6.0, 1e-9);
  EXPECT_NEAR(b.nodes[0], 3.0, 1e-9);
}

TEST(CostBoundTest, MixesTwoTypesWhenBothResourcesBind) {
  // A core type (10 cores, 10 GiB, 1/h) and a memory type (2 cores, 100 GiB,
  // 1/h). Demand 20 cores, 200 GiB: alone each costs 20 (cores bind on the
  // memory type, memory on the core type); the mix 1.79 + 8.21 nodes holds
  // both exactly: 10x + 2y = 20, 10x + 100y = 200.
  std::vector<NodeType> types = {{"cpu", 10, 10 * kGi, 1.0}, {"mem", 2, 100 * kGi, 1.0}};
  CostBound b = ComputeCostBound({Item(20, 200 * kGi)}, types, 0);
  const double y = (200.0 - 20.0) / (100.0 - 2.0);  // from the two equations
  const double x = (20 - 2 * y) / 10;
  EXPECT_NEAR(b.nodes[0], x, 1e-9);
  EXPECT_NEAR(b.nodes[1], y, 1e-9);
  EXPECT_NEAR(b.cost, x + y, 1e-9);
  EXPECT_LT(b.cost, 20);
}

TEST(CostBoundTest, NoFractionalMixIsCheaperThanTheBound) {
  // Against a brute force over a grid of fractional mixes of the issue's types.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cores(1, 2000), memory_gib(1, 8000);
  const std::vector<NodeType> types = IssueTypes();
  for (int round = 0; round < 20; ++round) {
    const double C = cores(rng);
    const int64_t M = static_cast<int64_t>(memory_gib(rng) * static_cast<double>(kGi));
    const CostBound b = ComputeCostBound({Item(C, M)}, types, 0.2);
    // The bound's own mix covers the demand.
    double c = 0, m = 0, cost = 0;
    for (size_t t = 0; t < types.size(); ++t) {
      c += b.nodes[t] * types[t].cores * 0.8;
      m += b.nodes[t] * static_cast<double>(types[t].memory_bytes) * 0.8;
      cost += b.nodes[t] * types[t].price;
    }
    EXPECT_GE(c, C * (1 - 1e-9));
    EXPECT_GE(m, static_cast<double>(M) * (1 - 1e-9));
    EXPECT_NEAR(cost, b.cost, 1e-6 * b.cost);
    // No mix on the grid that covers the demand is cheaper.
    const double step = 0.02;
    for (double sa = 0; sa <= 1.0001; sa += step) {
      for (double sb = 0; sa + sb <= 1.0001; sb += step) {
        const double sc = std::max(0.0, 1 - sa - sb);
        // Scale the direction (sa, sb, sc) until both demands are covered.
        const double cap_c = 0.8 * (sa * 16 + sb * 8 + sc * 4);
        const double cap_m = 0.8 * (sa * 32 + sb * 64 + sc * 128) * static_cast<double>(kGi);
        const double k = std::max(C / cap_c, static_cast<double>(M) / cap_m);
        EXPECT_GE(k * (sa * 0.68 + sb * 0.5 + sc * 0.8), b.cost * (1 - 1e-9));
      }
    }
  }
}

TEST(CheapestTypeForTest, CheapestThatHoldsIt) {
  const std::vector<NodeType> types = IssueTypes();
  EXPECT_EQ(CheapestTypeFor(types, 0.2, 1, kGi), 1);       // b: 0.50
  EXPECT_EQ(CheapestTypeFor(types, 0.2, 7, kGi), 0);       // over b's 6.4 usable cores: a
  EXPECT_EQ(CheapestTypeFor(types, 0.2, 1, 60 * kGi), 2);  // over b's 51.2 GiB: c
  EXPECT_EQ(CheapestTypeFor(types, 0.2, 13, kGi), -1);     // over every type's cores
}

}  // namespace
}  // namespace inferd::plan
