#include "dashboard/node_facts.h"

#include <gtest/gtest.h>

namespace inferd::dashboard {
namespace {

TEST(NodeFacts, SaysWhereTheBudgetCameFrom) {
  topology::CpuBudget budget;
  budget.hardware.source = "synthetic:test";
  budget.hardware.cores.resize(4);
  for (int i = 0; i < 4; ++i) budget.hardware.cores[i].pus = {i};
  budget.affinity = {0, 1, 2, 3};
  budget.affinity_from_process = true;
  budget.cgroup.cpuset = std::vector<int>{0, 1, 2};
  budget.cgroup.cpuset_file = "/sys/fs/cgroup/cpuset.cpus.effective";
  budget.cgroup.quota = topology::CpuQuota{200000, 100000, "/sys/fs/cgroup/cpu.max"};
  budget.available_cores = 3;
  budget.quota_cores = 2;
  budget.usable = {{0, 0, 0, 0}, {1, 1, 0, 0}};
  budget.notes = {"quota caps the budget at 2 cores"};
  topology::CorePlan plan;
  plan.group_size = 1;
  plan.executors = {{0, {0}, 1, 0, 0}, {1, {1}, 1, 0, 0}};

  NodeFacts n = DescribeNode(budget, plan);
  EXPECT_EQ(n.usable_cores, 2);
  EXPECT_EQ(n.usable_cpus, "0-1");
  ASSERT_EQ(n.origin.size(), 6u);
  EXPECT_EQ(n.origin[0].second, "4 cores, 4 PUs (synthetic:test)");
  EXPECT_EQ(n.origin[1].second, "0-3 (sched_getaffinity)");
  EXPECT_EQ(n.origin[2].second, "0-2 (/sys/fs/cgroup/cpuset.cpus.effective)");
  EXPECT_EQ(n.origin[3].second, "not given");
  EXPECT_EQ(n.origin[4].second, "2.00 CPUs -> 2 cores (/sys/fs/cgroup/cpu.max)");
  EXPECT_EQ(n.origin[5].second, "2 of 3 allowed cores: cpus 0-1");
  ASSERT_EQ(n.executors.size(), 2u);
  EXPECT_EQ(n.executors[1].cpus, (std::vector<int>{1}));
  EXPECT_EQ(n.notes, (std::vector<std::string>{"quota caps the budget at 2 cores"}));
}

}  // namespace
}  // namespace inferd::dashboard
