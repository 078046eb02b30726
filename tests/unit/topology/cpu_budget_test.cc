#include "topology/cpu_budget.h"

#include <gtest/gtest.h>

#include <set>

#include "unit/topology/fake_tree.h"

namespace inferd::topology {
namespace {

using testing::FakeTree;
using V = std::vector<int>;

// Two sockets x 12 cores x 2 SMT: core i has PUs 2i and 2i+1; package 0 holds
// cores 0-11 (PUs 0-23).
constexpr const char* kTwoSockets = "package:2 core:12 pu:2";

DetectOptions Synthetic(const FakeTree& t, const std::string& desc = kTwoSockets) {
  DetectOptions o;
  o.hardware.synthetic = desc;
  o.cgroups = {t.Path("proc"), t.Path("sys/fs/cgroup")};
  return o;
}

void WriteV2Quota(const FakeTree& t, const std::string& cpu_max) {
  t.Write("proc/self/cgroup", "0::/ctr\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n");
  t.Write("sys/fs/cgroup/ctr/cpu.max", cpu_max);
}

TEST(CpuBudgetTest, SyntheticTopologyIsRead) {
  FakeTree t;
  auto b = DetectCpuBudget(Synthetic(t));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->hardware.num_packages, 2);
  EXPECT_EQ(b->hardware.cores.size(), 24u);
  EXPECT_EQ(b->hardware.num_pus(), 48);
  EXPECT_EQ(b->hardware.max_pus_per_core(), 2);
  EXPECT_EQ(b->hardware.cores[13].package, 1);
  EXPECT_EQ(b->hardware.cores[13].pus, (V{26, 27}));
  // No limits: every physical core once, never an SMT sibling twice.
  EXPECT_EQ(b->usable_cores(), 24);
  EXPECT_EQ(b->available_cores, 24);
}

TEST(CpuBudgetTest, QuotaOfEightGivesEightPhysicalCoresInOnePackage) {
  FakeTree t;
  WriteV2Quota(t, "800000 100000\n");
  auto b = DetectCpuBudget(Synthetic(t));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->quota_cores, 8);
  ASSERT_EQ(b->usable_cores(), 8);
  std::set<int> cores, packages, cpus;
  for (const auto& u : b->usable) {
    cores.insert(u.core);
    packages.insert(u.package);
    cpus.insert(u.cpu);
    // The pinned cpu is one of that core's PUs.
    const auto& pus = b->hardware.cores[u.core].pus;
    EXPECT_NE(std::find(pus.begin(), pus.end(), u.cpu), pus.end());
  }
  EXPECT_EQ(cores.size(), 8u);  // 8 distinct physical cores
  EXPECT_EQ(cpus.size(), 8u);
  EXPECT_EQ(packages.size(), 1u);  // in one socket
}

TEST(CpuBudgetTest, AffinityNarrowerThanQuotaWins) {
  FakeTree t;
  WriteV2Quota(t, "800000 100000\n");
  DetectOptions o = Synthetic(t);
  o.affinity = V{0, 1, 2, 3, 4, 5};  // three cores, both SMT threads of each
  auto b = DetectCpuBudget(o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->usable_cores(), 3);
  EXPECT_EQ(b->usable_cpus(), (V{0, 2, 4}));
}

TEST(CpuBudgetTest, QuotaNarrowerThanAffinityWins) {
  FakeTree t;
  WriteV2Quota(t, "250000 100000\n");
  DetectOptions o = Synthetic(t);
  o.affinity = V{0, 2, 4, 6, 8};
  auto b = DetectCpuBudget(o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->usable_cores(), 2);  // 2.5 CPUs rounded down
}

TEST(CpuBudgetTest, PrefersThePackageThatHoldsAll) {
  FakeTree t;
  t.Write("proc/self/cgroup", "1:cpu:/\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "300000\n");  // v1 format
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  DetectOptions o = Synthetic(t);
  o.affinity = V{0, 2, 24, 26, 28, 30};  // 2 cores in package 0, 4 in package 1
  auto b = DetectCpuBudget(o);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->usable_cores(), 3);
  for (const auto& u : b->usable) EXPECT_EQ(u.package, 1) << "cpu " << u.cpu;
}

TEST(CpuBudgetTest, PrefersOneNumaNodeThenFullestPackage) {
  FakeTree t;
  t.Write("proc/self/cgroup", "1:cpu:/\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "400000\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  // 2 packages x 2 NUMA nodes x 4 cores, no SMT: node k has cpus 4k..4k+3.
  auto b = DetectCpuBudget(Synthetic(t, "package:2 numa:2 core:4 pu:1"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->hardware.numa_nodes.size(), 4u);
  ASSERT_EQ(b->usable_cores(), 4);
  std::set<int> nodes;
  for (const auto& u : b->usable) nodes.insert(u.numa_node);
  EXPECT_EQ(nodes.size(), 1u);
}

TEST(CpuBudgetTest, CgroupCpusetNarrows) {
  FakeTree t;
  t.Write("proc/self/cgroup", "3:cpuset:/a\n");
  t.Write("sys/fs/cgroup/cpuset/a/cpuset.effective_cpus", "0-3,8,10-11\n");
  auto b = DetectCpuBudget(Synthetic(t));
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(b->cgroup.cpuset.has_value());
  // PUs 0-3 are cores 0-1, 8 is core 4, 10-11 is core 5.
  EXPECT_EQ(b->usable_cpus(), (V{0, 2, 8, 10}));
}

TEST(CpuBudgetTest, CpusFlagNarrowsAndCountsSiblingsOnce) {
  FakeTree t;
  DetectOptions o = Synthetic(t);
  o.cpus = "0-3,6";
  auto b = DetectCpuBudget(o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->usable_cpus(), (V{0, 2, 6}));
}

TEST(CpuBudgetTest, CpusFlagErrors) {
  FakeTree t;
  DetectOptions o = Synthetic(t);
  o.cpus = "7-2";
  auto bad = DetectCpuBudget(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--cpus"), std::string::npos);
  o.cpus = "100";
  auto none = DetectCpuBudget(o);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("none of these CPUs"), std::string::npos);
}

TEST(CpuBudgetTest, BadSyntheticIsInvalidArgument) {
  FakeTree t;
  auto b = DetectCpuBudget(Synthetic(t, "nonsense:3"));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
}

TEST(CpuBudgetTest, LiveMachineHasAtLeastOneCore) {
  DetectOptions o;  // live hwloc, live cgroups, live affinity
  auto b = DetectCpuBudget(o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(b->hardware.live);
  EXPECT_TRUE(b->affinity_from_process);
  EXPECT_GE(b->usable_cores(), 1);
}

}  // namespace
}  // namespace inferd::topology
