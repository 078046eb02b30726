#include "plan/mixed_packer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "plan/fleet_plan.h"
#include "unit/support/test_units.h"

namespace inferd::plan {
namespace {

using ::testing::HasSubstr;

using test_support::kGi;

PackItem MixedItem(int model, double cores, int64_t memory) {
  PackItem it;
  it.model = model;
  it.cores = cores;
  it.rps = cores * 100;
  it.memory_bytes = memory;
  return it;
}

std::vector<NodeShape> ShapesOf(const std::vector<NodeType>& types, double headroom) {
  std::vector<NodeShape> shapes;
  for (const NodeType& t : types) shapes.push_back(t.Shape(headroom));
  return shapes;
}

// A core type and a memory type at one price each, no headroom.
const std::vector<NodeType> kTwo = {{"cpu", 10, 10 * kGi, 1.0}, {"mem", 2, 100 * kGi, 1.0}};

TEST(MixedPackerTest, PairsCoreHeavyAndMemoryHeavyNodes) {
  // 4 hot models of 9 cores and 1 GiB fit only the core type, 4 cold ones of
  // 1 core and 90 GiB only the memory type, and no two of a kind share a
  // node: the plan must use both types, one node per model, at a cost of 8.
  std::vector<PackItem> items;
  for (int i = 0; i < 4; ++i) items.push_back(MixedItem(i, 9, kGi));
  for (int i = 4; i < 8; ++i) items.push_back(MixedItem(i, 1, 90 * kGi));
  MixedPacking p = PackMixed(items, kTwo, 0);
  ASSERT_TRUE(CheckPacking(p.packing, items, ShapesOf(kTwo, 0)).ok());
  EXPECT_DOUBLE_EQ(p.cost, 8);
  EXPECT_EQ(p.best_single_type, -1);  // neither type holds every model
  for (const NodeLoad& n : p.packing.nodes) {
    EXPECT_EQ(n.type, items[n.items[0]].memory_bytes > 10 * kGi ? 1 : 0);
  }
}

TEST(MixedPackerTest, BeatsEverySingleTypeWhenBothResourcesBind) {
  // 40 hot models (1.5 cores, 0.5 GiB) and 40 cold ones (0.1 core, 12 GiB).
  // The cold ones fit only the memory type, which alone needs 32+ nodes for
  // the 64 cores. The LP mix is 5.5 core nodes + 4.5 memory nodes (9.96); 7 core
  // nodes of 6 hot models and 5 memory nodes of 8 cold ones make 12 (1.20x).
  std::vector<PackItem> items;
  for (int i = 0; i < 40; ++i) items.push_back(MixedItem(i, 1.5, kGi / 2));
  for (int i = 40; i < 80; ++i) items.push_back(MixedItem(i, 0.1, 12 * kGi));
  MixedPacking p = PackMixed(items, kTwo, 0);
  ASSERT_TRUE(CheckPacking(p.packing, items, ShapesOf(kTwo, 0)).ok());
  const CostBound bound = ComputeCostBound(items, kTwo, 0);
  EXPECT_GE(p.cost, bound.cost - 1e-9);
  EXPECT_LE(p.cost, 1.25 * bound.cost);
  ASSERT_GE(p.best_single_type, 0);
  EXPECT_LT(p.cost, 0.5 * p.best_single_type_cost);
  EXPECT_DOUBLE_EQ(p.cost, PackingCost(p.packing, kTwo));
}

TEST(MixedPackerTest, RandomSetsArePackedValidlyAndNeverUnderTheBound) {
  std::mt19937 rng(11);
  const std::vector<NodeType> types = {
      {"a", 16, 32 * kGi, 0.68}, {"b", 8, 64 * kGi, 0.50}, {"c", 4, 128 * kGi, 0.80}};
  std::lognormal_distribution<double> cores(-1.0, 1.2), memory_gib(0.5, 1.3);
  for (int round = 0; round < 10; ++round) {
    std::vector<PackItem> items;
    for (int i = 0; i < 150; ++i) {
      items.push_back(MixedItem(i, std::min(cores(rng), 12.0),
                                static_cast<int64_t>(std::min(memory_gib(rng), 25.0) * kGi)));
    }
    MixedPacking p = PackMixed(items, types, 0.2);
    ASSERT_TRUE(CheckPacking(p.packing, items, ShapesOf(types, 0.2)).ok()) << "round " << round;
    const CostBound bound = ComputeCostBound(items, types, 0.2);
    EXPECT_GE(p.cost, bound.cost * (1 - 1e-9));
    EXPECT_LE(p.cost, p.best_single_type_cost + 1e-9);  // a single type is a candidate
    // Every node has the cheapest type its load fits (re-typing ran last).
    for (const NodeLoad& n : p.packing.nodes) {
      EXPECT_EQ(n.type, CheapestTypeFor(types, 0.2, n.cores, n.memory_bytes));
    }
  }
}

TEST(CheckPackingWithTypesTest, ChecksEachNodeAgainstItsType) {
  std::vector<PackItem> items = {MixedItem(0, 9, kGi), MixedItem(1, 1, 90 * kGi)};
  const std::vector<NodeShape> shapes = ShapesOf(kTwo, 0);
  Packing p;
  NodeLoad a, b;
  a.items = {0};
  a.type = 0;
  b.items = {1};
  b.type = 1;
  p.nodes = {a, b};
  EXPECT_TRUE(CheckPacking(p, items, shapes).ok());
  p.nodes[0].type = 1;  // 9 cores on the 2-core type
  EXPECT_THAT(CheckPacking(p, items, shapes).message(), HasSubstr("cores"));
  p.nodes[0].type = 0;
  p.nodes[1].type = 0;  // 90 GiB on the 10 GiB type
  EXPECT_THAT(CheckPacking(p, items, shapes).message(), HasSubstr("bytes"));
  p.nodes[1].type = 2;  // no such type
  EXPECT_THAT(CheckPacking(p, items, shapes).message(), HasSubstr("unknown type"));
}

TEST(MixedFleetPlanTest, SplitsForTheLargestTypeThatHoldsTheModel) {
  // 30 cores on types of 10 and 2 cores: 3 replicas of 10 cores (not 15 of 2,
  // nor 6 of 5, which could not share nodes); a 150 GiB model fits no type.
  std::vector<ModelDemand> models(1);
  models[0] = {"hot", 3000, 10, kGi, 3};
  auto plan = MakeMixedFleetPlan(models, kTwo, 0, "m.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->items.size(), 3u);
  EXPECT_EQ(plan->packing.nodes.size(), 3u);
  EXPECT_DOUBLE_EQ(plan->cost_per_hour, 3);
  EXPECT_EQ(plan->replica_share, 1.0);
  models[0] = {"huge", 1, 10, 150 * kGi, 4};
  auto bad = MakeMixedFleetPlan(models, kTwo, 0, "m.yaml");
  EXPECT_THAT(bad.status().message(), HasSubstr("m.yaml:4: model 'huge': fits on no node type"));
}

TEST(MixedFleetPlanTest, SplitsFinerWhenManyHotModelsCanPairUp) {
  // 20 models of 7 cores on a 10-core type at 1.0/h and a 5-core type at
  // 0.4/h (no headroom). Unsplit, each needs a 10-core node alone: 20.0/h.
  // Split in halves of 3.5 cores, a 5-core node holds one half (0.4/h each)
  // and a 10-core node two halves of different models: 40 halves at 0.4 =
  // 16.0/h, or 20 at 1.0/h.
  const std::vector<NodeType> types = {{"big", 10, 100 * kGi, 1.0}, {"small", 5, 100 * kGi, 0.4}};
  std::vector<ModelDemand> models;
  for (int i = 0; i < 20; ++i) models.push_back({"m" + std::to_string(i), 700, 10, kGi, i + 2});
  auto plan = MakeMixedFleetPlan(models, types, 0, "m.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->replica_share, 0.5);
  EXPECT_EQ(plan->items.size(), 40u);
  EXPECT_NEAR(plan->cost_per_hour, 16.0, 1e-9);
  // The bound counts the fewest copies: 140 cores at 0.08/core = 11.2.
  EXPECT_NEAR(plan->cost_bound.cost, 11.2, 1e-9);
}

}  // namespace
}  // namespace inferd::plan
