#include "topology/cgroup_limits.h"

#include <gtest/gtest.h>

#include "unit/topology/fake_tree.h"

namespace inferd::topology {
namespace {

using testing::FakeTree;
using V = std::vector<int>;

CgroupPaths PathsIn(const FakeTree& t) { return {t.Path("proc"), t.Path("sys/fs/cgroup")}; }

TEST(CpuMaxTest, ParsesV2Formats) {
  EXPECT_FALSE(ParseCpuMax("max 100000\n").has_value());
  EXPECT_FALSE(ParseCpuMax("max").has_value());
  auto q = ParseCpuMax("200000 100000\n");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->whole_cpus(), 2);
  EXPECT_DOUBLE_EQ(q->cpus(), 2.0);
  EXPECT_EQ(ParseCpuMax("150000 100000")->whole_cpus(), 1);  // rounded down
  EXPECT_EQ(ParseCpuMax("50000 100000")->whole_cpus(), 1);   // at least 1
  std::string err;
  EXPECT_FALSE(ParseCpuMax("lots 100000", &err).has_value());
  EXPECT_NE(err, "");
}

TEST(CpuMaxTest, ParsesV1Formats) {
  EXPECT_FALSE(ParseCfsQuota("-1\n", "100000\n").has_value());
  auto q = ParseCfsQuota("250000\n", "100000\n");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->whole_cpus(), 2);
  std::string err;
  EXPECT_FALSE(ParseCfsQuota("x", "100000", &err).has_value());
  EXPECT_NE(err, "");
}

TEST(CgroupLimitsTest, NoFilesMeansNoLimits) {
  FakeTree t;
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  EXPECT_FALSE(l.quota.has_value());
  EXPECT_FALSE(l.cpuset.has_value());
}

TEST(CgroupLimitsTest, ReadsV2QuotaAndCpusetOfOwnCgroup) {
  FakeTree t;
  t.Write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  t.Write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "800000 100000\n");
  t.Write("sys/fs/cgroup/kubepods/pod1/ctr/cpuset.cpus.effective", "0-3,8,10-11\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.quota.has_value());
  EXPECT_EQ(l.quota->whole_cpus(), 8);
  EXPECT_NE(l.quota->file.find("kubepods/pod1/ctr/cpu.max"), std::string::npos);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(*l.cpuset, (V{0, 1, 2, 3, 8, 10, 11}));
}

TEST(CgroupLimitsTest, FindsTheInnermostCpuStat) {
  FakeTree t;
  t.Write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  t.Write("sys/fs/cgroup/cpu.stat", "usage_usec 1\n");
  t.Write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.stat", "usage_usec 1\nnr_throttled 3\n");
  EXPECT_EQ(ReadCgroupLimits(PathsIn(t)).cpu_stat_file,
            t.Path("sys/fs/cgroup/kubepods/pod1/ctr/cpu.stat"));
  FakeTree v1;
  v1.Write("proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n");
  v1.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.stat", "nr_throttled 0\n");
  EXPECT_EQ(ReadCgroupLimits(PathsIn(v1)).cpu_stat_file,
            v1.Path("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.stat"));
  EXPECT_EQ(ReadCgroupLimits(PathsIn(FakeTree())).cpu_stat_file, "");
}

TEST(CgroupLimitsTest, V2ParentQuotaIsTighter) {
  FakeTree t;
  t.Write("proc/self/cgroup", "0::/pod/ctr\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpu\n");
  t.Write("sys/fs/cgroup/pod/cpu.max", "300000 100000\n");
  t.Write("sys/fs/cgroup/pod/ctr/cpu.max", "max 100000\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.quota.has_value());
  EXPECT_EQ(l.quota->whole_cpus(), 3);
}

TEST(CgroupLimitsTest, ReadsV1QuotaAndCpuset) {
  FakeTree t;
  t.Write("proc/self/cgroup",
          "4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n1:name=systemd:/\n0::/\n");
  t.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
  t.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  t.Write("sys/fs/cgroup/cpuset/docker/abc/cpuset.cpus", "2-5\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.quota.has_value());
  EXPECT_EQ(l.quota->whole_cpus(), 3);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(*l.cpuset, (V{2, 3, 4, 5}));
}

TEST(CgroupLimitsTest, V1EffectiveCpusPreferred) {
  FakeTree t;
  t.Write("proc/self/cgroup", "3:cpuset:/a\n");
  t.Write("sys/fs/cgroup/cpuset/a/cpuset.effective_cpus", "1\n");
  t.Write("sys/fs/cgroup/cpuset/a/cpuset.cpus", "0-3\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(*l.cpuset, (V{1}));
}

TEST(CgroupLimitsTest, V1UnlimitedQuota) {
  FakeTree t;
  t.Write("proc/self/cgroup", "1:cpu:/\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_FALSE(ReadCgroupLimits(PathsIn(t)).quota.has_value());
}

// A container without a cgroup namespace sees the host's path in
// /proc/self/cgroup, but its own cgroup mounted as the root.
TEST(CgroupLimitsTest, HostPathFallsBackToMountRoot) {
  FakeTree t;
  t.Write("proc/self/cgroup", "1:cpu:/kubepods/burstable/pod9/ctr\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "200000\n");
  t.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.quota.has_value());
  EXPECT_EQ(l.quota->whole_cpus(), 2);
}

TEST(CgroupLimitsTest, HybridReadsUnifiedMount) {
  FakeTree t;
  t.Write("proc/self/cgroup", "1:cpu:/\n0::/svc\n");
  t.Write("sys/fs/cgroup/unified/cgroup.controllers", "cpu\n");
  t.Write("sys/fs/cgroup/unified/svc/cpu.max", "100000 100000\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  ASSERT_TRUE(l.quota.has_value());
  EXPECT_EQ(l.quota->whole_cpus(), 1);
}

TEST(CgroupLimitsTest, MalformedFileIsANoteNotALimit) {
  FakeTree t;
  t.Write("proc/self/cgroup", "0::/\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpu\n");
  t.Write("sys/fs/cgroup/cpu.max", "garbage\n");
  CgroupLimits l = ReadCgroupLimits(PathsIn(t));
  EXPECT_FALSE(l.quota.has_value());
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("cpu.max"), std::string::npos);
}

}  // namespace
}  // namespace inferd::topology
