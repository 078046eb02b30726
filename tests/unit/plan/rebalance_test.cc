#include "plan/rebalance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "plan/plan_report.h"
#include "unit/support/test_units.h"

namespace inferd::plan {
namespace {

using ::testing::HasSubstr;

using test_support::kGi;

const std::vector<NodeType> kTypes = {
    {"a", 16, 32 * kGi, 0.68}, {"b", 8, 64 * kGi, 0.50}, {"c", 4, 128 * kGi, 0.80}};

// A few hundred models of mixed shapes, deterministic in `seed`.
std::vector<ModelDemand> Fleet(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> rps(2.5, 1.2), core_ms(2.3, 0.7), memory_mib(6.5, 1.0);
  std::vector<ModelDemand> models;
  for (int i = 0; i < n; ++i) {
    ModelDemand m;
    m.name = "m" + std::to_string(i);
    m.rps = rps(rng);
    m.core_ms = core_ms(rng);
    m.memory_bytes = static_cast<int64_t>(std::min(memory_mib(rng), 20000.0) * (1 << 20));
    m.line = i + 2;
    models.push_back(m);
  }
  return models;
}

std::vector<CurrentNode> RunningPlan(const FleetPlan& plan) {
  std::ostringstream json;
  WritePlanJson(plan, json);
  auto nodes = ParseCurrentPlan(json.str(), "plan.json");
  EXPECT_TRUE(nodes.ok()) << nodes.status().message();
  return *nodes;
}

TEST(ParseCurrentPlanTest, ReadsNamesTypesAndModels) {
  auto nodes = ParseCurrentPlan(
      R"({"nodes": [{"name": "node-0001", "type": "a", "cores_used": 1, "memory_used_bytes": 2,
          "models": [{"name": "m1", "rps": 1, "cores": 1, "memory_bytes": 2}]}],
          "lower_bound_nodes": 1})",
      "p.json");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "node-0001");
  EXPECT_EQ((*nodes)[0].type, "a");
  EXPECT_EQ((*nodes)[0].models, std::vector<std::string>{"m1"});
}

TEST(ParseCurrentPlanTest, RefusesWhatIsNotAPlan) {
  EXPECT_THAT(ParseCurrentPlan("{", "p.json").status().message(), HasSubstr("p.json: not the"));
  EXPECT_THAT(ParseCurrentPlan(R"({"models": []})", "p.json").status().message(),
              HasSubstr("no \"nodes\""));
  EXPECT_THAT(ParseCurrentPlan(R"({"nodes": [{"name": "x", "models": []},
                                             {"name": "x", "models": []}]})",
                               "p.json")
                  .status()
                  .message(),
              HasSubstr("twice"));
}

TEST(RebalanceTest, TheSameDemandMovesNothing) {
  auto plan = MakeMixedFleetPlan(Fleet(300, 1), kTypes, 0.2, "f.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto running = RunningPlan(*plan);
  auto again = PrepareMixedRebalance(Fleet(300, 1), kTypes, 0.2, "f.yaml", running);
  ASSERT_TRUE(again.ok());
  RebalanceOptions options;
  options.cost_target = 10;  // the running plan is good enough: no elimination
  ASSERT_TRUE(Rebalance(running, "plan.json", options, &*again).ok());
  EXPECT_EQ(again->rebalance.moved.models, 0);
  EXPECT_EQ(again->rebalance.kept_nodes, static_cast<int>(running.size()));
  EXPECT_EQ(again->rebalance.overloaded_nodes, 0);
  EXPECT_DOUBLE_EQ(again->cost_per_hour, plan->cost_per_hour);
  EXPECT_EQ(again->NodeName(0), running[0].name);
}

TEST(RebalanceTest, ALoadShiftMovesFewModelsAndStaysValid) {
  auto plan = MakeMixedFleetPlan(Fleet(400, 2), kTypes, 0.2, "f.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto running = RunningPlan(*plan);
  // Every model's rps moves by up to 20% either way; a few models are new.
  std::vector<ModelDemand> shifted = Fleet(400, 2);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> factor(0.8, 1.2);
  for (ModelDemand& m : shifted) m.rps *= factor(rng);
  std::vector<ModelDemand> extra = Fleet(10, 9);
  for (ModelDemand& m : extra) m.name = "new-" + m.name;
  shifted.insert(shifted.end(), extra.begin(), extra.end());
  auto next = PrepareMixedRebalance(shifted, kTypes, 0.2, "f.yaml", running);
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(Rebalance(running, "plan.json", {}, &*next).ok());
  const RebalanceSummary& r = next->rebalance;
  // Checked by FinishFleetPlan inside; again here, independently of the summary.
  EXPECT_TRUE(CheckPacking(next->packing, next->items, next->Shapes()).ok());
  EXPECT_GT(r.overloaded_nodes, 0);
  EXPECT_LE(r.moved.models, 400 / 10);
  EXPECT_LT(r.moved.memory_bytes, r.from_scratch.memory_bytes);
  // Within 1.10x of the bound, give or take one node: a fleet of a dozen
  // nodes cannot come closer than whole nodes.
  EXPECT_LE(next->cost_per_hour, 1.10 * next->cost_bound.cost + 0.68);
  // The count agrees with an independent one: models whose nodes changed.
  std::map<std::string, std::set<std::string>> before, after;
  for (const CurrentNode& n : running) {
    for (const std::string& m : n.models) before[m].insert(n.name);
  }
  for (size_t n = 0; n < next->packing.nodes.size(); ++n) {
    for (int i : next->packing.nodes[n].items) {
      after[next->models[next->items[i].model].name].insert(next->NodeName(n));
    }
  }
  int moved = 0;
  for (const auto& [model, nodes] : after) {
    if (!before.count(model)) continue;
    for (const std::string& n : nodes) {
      if (!before[model].count(n)) {
        ++moved;
        break;
      }
    }
  }
  EXPECT_EQ(moved, r.moved.models);
}

TEST(RebalanceTest, OneShapePlansRebalanceToo) {
  NodeShape shape{16, 64 * kGi, 0.2};
  auto plan = MakeFleetPlan(Fleet(200, 4), shape, "f.yaml");
  ASSERT_TRUE(plan.ok());
  const auto running = RunningPlan(*plan);
  std::vector<ModelDemand> shifted = Fleet(200, 4);
  for (size_t i = 0; i < shifted.size(); i += 5) shifted[i].rps *= 1.2;
  auto next = PrepareFleetPlan(shifted, shape, "f.yaml");
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(Rebalance(running, "plan.json", {}, &*next).ok());
  EXPECT_TRUE(CheckPacking(next->packing, next->items, shape).ok());
  EXPECT_LE(next->rebalance.moved.models, 20);
}

TEST(RebalanceTest, RefusesATypeNoFlagNames) {
  std::vector<CurrentNode> running = {{"node-0001", "z", {"m0"}}};
  auto next = PrepareMixedFleetPlan(Fleet(5, 1), kTypes, 0.2, "f.yaml");
  ASSERT_TRUE(next.ok());
  EXPECT_THAT(Rebalance(running, "plan.json", {}, &*next).message(),
              HasSubstr("plan.json: node node-0001 has the type 'z', which no --node-type names"));
}

}  // namespace
}  // namespace inferd::plan
