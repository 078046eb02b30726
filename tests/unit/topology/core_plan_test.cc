#include "topology/core_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace inferd::topology {
namespace {

using V = std::vector<int>;

// `n` cores on one NUMA node / package, cpus first..first+n-1.
std::vector<UsableCore> Cores(int n, int numa = 0, int package = 0, int first = 0) {
  std::vector<UsableCore> cores;
  for (int i = 0; i < n; ++i) cores.push_back({first + i, first + i, numa, package});
  return cores;
}

std::vector<UsableCore> Concat(std::vector<UsableCore> a, const std::vector<UsableCore>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

config::ModelConfig Auto(const std::string& name) {
  config::ModelConfig m;
  m.name = name;
  return m;
}

config::ModelConfig Manual(const std::string& name, int count, int threads) {
  config::ModelConfig m;
  m.name = name;
  m.instances.automatic = false;
  m.instances.count = count;
  m.instances.threads = threads;
  return m;
}

// Properties every plan must have, whatever it was asked.
void ExpectSound(const CorePlan& plan, const std::vector<UsableCore>& cores) {
  ASSERT_FALSE(plan.executors.empty());
  EXPECT_LE(plan.total_threads(), static_cast<int>(cores.size()));
  std::set<int> used;
  for (size_t i = 0; i < plan.executors.size(); ++i) {
    const auto& e = plan.executors[i];
    EXPECT_EQ(e.id, static_cast<int>(i));
    EXPECT_EQ(e.num_threads, static_cast<int>(e.cores.size()));
    EXPECT_GE(e.num_threads, 1);
    EXPECT_LE(e.num_threads, plan.group_size);
    for (int cpu : e.cores) {
      EXPECT_TRUE(used.insert(cpu).second) << "cpu " << cpu << " in two executors";
      auto it = std::find_if(cores.begin(), cores.end(),
                             [&](const UsableCore& c) { return c.cpu == cpu; });
      ASSERT_NE(it, cores.end()) << "cpu " << cpu << " is not in the budget";
      EXPECT_EQ(it->numa_node, e.numa_node) << "executor " << e.id << " straddles NUMA nodes";
      EXPECT_EQ(it->package, e.package) << "executor " << e.id << " straddles packages";
    }
  }
  for (const auto& m : plan.models) {
    EXPECT_FALSE(m.executor_ids.empty()) << m.name;
    EXPECT_GE(m.max_concurrency, 1) << m.name;
    EXPECT_LE(m.max_concurrency, static_cast<int>(m.executor_ids.size())) << m.name;
    for (int id : m.executor_ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, static_cast<int>(plan.executors.size()));
    }
  }
}

TEST(CorePlanTest, NoModelsGivesOneCoreExecutors) {
  auto cores = Cores(4);
  auto plan = MakeCorePlan(cores, {});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->group_size, 1);
  EXPECT_EQ(plan->executors.size(), 4u);
}

TEST(CorePlanTest, EmptyBudgetIsAnError) {
  auto plan = MakeCorePlan({}, {Auto("a")});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
}

TEST(CorePlanTest, ManualTwoByOneOnTwoCores) {
  auto cores = Cores(2);
  auto plan = MakeCorePlan(cores, {Manual("m", 2, 1)});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  ASSERT_EQ(plan->executors.size(), 2u);
  EXPECT_EQ(plan->executors[0].cores, (V{0}));
  EXPECT_EQ(plan->executors[1].cores, (V{1}));
  const PlannedModel* m = plan->FindModel("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->max_concurrency, 2);
  EXPECT_EQ(m->executor_ids, (V{0, 1}));
  EXPECT_TRUE(plan->warnings.empty());
}

TEST(CorePlanTest, AutoUsesEveryOneCoreExecutor) {
  auto cores = Cores(6);
  auto plan = MakeCorePlan(cores, {Auto("a"), Auto("b")});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->executors.size(), 6u);
  EXPECT_EQ(plan->FindModel("b")->max_concurrency, 6);
}

TEST(CorePlanTest, AutoThreadsOptionSetsGroupSize) {
  auto cores = Cores(4);
  PlanOptions o;
  o.auto_threads = 2;
  auto plan = MakeCorePlan(cores, {Auto("a")}, o);
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->executors.size(), 2u);
  EXPECT_EQ(plan->executors[1].cores, (V{2, 3}));
}

TEST(CorePlanTest, LargestThreadsSetsGroupSize) {
  auto cores = Cores(4);
  auto plan = MakeCorePlan(cores, {Manual("wide", 1, 2), Auto("a")});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->group_size, 2);
  ASSERT_EQ(plan->executors.size(), 2u);
  EXPECT_EQ(plan->FindModel("wide")->max_concurrency, 1);
  EXPECT_EQ(plan->FindModel("a")->max_concurrency, 2);
}

TEST(CorePlanTest, CountBeyondBudgetIsClampedWithReason) {
  auto cores = Cores(2);
  auto plan = MakeCorePlan(cores, {Manual("big", 4, 1)});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->FindModel("big")->max_concurrency, 2);
  ASSERT_EQ(plan->warnings.size(), 1u);
  const std::string& w = plan->warnings[0];
  EXPECT_NE(w.find("'big'"), std::string::npos) << w;
  EXPECT_NE(w.find("count: 4"), std::string::npos) << w;
  EXPECT_NE(w.find("2 usable cores"), std::string::npos) << w;
  EXPECT_NE(w.find("clamped to 2"), std::string::npos) << w;
}

TEST(CorePlanTest, ThreadsBeyondANumaNodeAreClamped) {
  auto cores = Concat(Cores(4, 0, 0, 0), Cores(4, 1, 1, 4));
  auto plan = MakeCorePlan(cores, {Manual("huge", 1, 6)});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->group_size, 4);
  EXPECT_EQ(plan->executors.size(), 2u);
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("'huge'"), std::string::npos);
  EXPECT_NE(plan->warnings[0].find("NUMA"), std::string::npos);
}

TEST(CorePlanTest, RemainderBecomesSmallerExecutorForNarrowModels) {
  auto cores = Cores(5);
  auto plan = MakeCorePlan(cores, {Manual("wide", 2, 2), Auto("a")});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  ASSERT_EQ(plan->executors.size(), 3u);
  EXPECT_EQ(plan->executors[2].num_threads, 1);
  EXPECT_EQ(plan->FindModel("wide")->executor_ids, (V{0, 1}));
  EXPECT_EQ(plan->FindModel("a")->executor_ids, (V{0, 1, 2}));
  EXPECT_EQ(plan->total_threads(), 5);
}

TEST(CorePlanTest, RemainderNoModelCanUseStaysIdle) {
  auto cores = Cores(5);
  auto plan = MakeCorePlan(cores, {Manual("wide", 2, 2)});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->executors.size(), 2u);
  EXPECT_EQ(plan->total_threads(), 4);
  ASSERT_FALSE(plan->notes.empty());
  EXPECT_NE(plan->notes[0].find("idle"), std::string::npos);
}

TEST(CorePlanTest, GroupsNeverStraddleNumaNodes) {
  auto cores = Concat(Cores(3, 0, 0, 0), Cores(3, 1, 0, 3));
  auto plan = MakeCorePlan(cores, {Manual("w", 3, 2), Auto("a")});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);  // checks each executor's cores share one node
  ASSERT_EQ(plan->executors.size(), 4u);
  EXPECT_EQ(plan->executors[0].cores, (V{0, 1}));
  EXPECT_EQ(plan->executors[1].cores, (V{2}));
  EXPECT_EQ(plan->executors[2].cores, (V{3, 4}));
  EXPECT_EQ(plan->FindModel("w")->max_concurrency, 2);  // two 2-core executors
  EXPECT_EQ(plan->warnings.size(), 1u);
}

TEST(CorePlanTest, ThousandMixedModelsNeverExceedTheBudget) {
  std::mt19937 rng(42);
  std::vector<config::ModelConfig> models;
  for (int i = 0; i < 1000; ++i) {
    std::string name = "m" + std::to_string(i);
    int kind = static_cast<int>(rng() % 3);
    if (kind == 0) {
      models.push_back(Auto(name));
    } else {
      models.push_back(Manual(name, 1 + static_cast<int>(rng() % 16),
                              1 + static_cast<int>(rng() % (kind == 1 ? 2 : 32))));
    }
  }
  for (int per_node : {1, 2, 3, 7, 12}) {
    for (int nodes : {1, 2, 4}) {
      std::vector<UsableCore> cores;
      for (int n = 0; n < nodes; ++n) {
        cores = Concat(cores, Cores(per_node, n, n / 2, n * per_node));
      }
      SCOPED_TRACE(std::to_string(nodes) + " nodes x " + std::to_string(per_node) + " cores");
      auto plan = MakeCorePlan(cores, models);
      ASSERT_TRUE(plan.ok());
      ExpectSound(*plan, cores);
      EXPECT_EQ(plan->models.size(), 1000u);
      // Shared executors: 1000 models cost no more threads than the cores.
      EXPECT_LE(plan->total_threads(), static_cast<int>(cores.size()));
      EXPECT_LE(plan->executors.size(), cores.size());
    }
  }
}

TEST(CorePlanTest, ZeroOrNegativeAsksAreTreatedAsOne) {
  auto cores = Cores(2);
  auto plan = MakeCorePlan(cores, {Manual("z", 0, 0)});
  ASSERT_TRUE(plan.ok());
  ExpectSound(*plan, cores);
  EXPECT_EQ(plan->group_size, 1);
  EXPECT_EQ(plan->FindModel("z")->max_concurrency, 1);
}

}  // namespace
}  // namespace inferd::topology
