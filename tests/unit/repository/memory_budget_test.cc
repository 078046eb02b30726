#include "repository/memory_budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::repository {
namespace {
namespace fs = std::filesystem;

TEST(MemoryBudget, ParsesSizes) {
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(*ParseByteSize("64K"), 64 * 1024);
  EXPECT_EQ(*ParseByteSize("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("512MiB"), int64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("2g"), int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("1.5G"), int64_t{3} << 29);
  EXPECT_EQ(*ParseByteSize("1T"), int64_t{1} << 40);
  EXPECT_EQ(*ParseByteSize("100B"), 100);
  for (const char* bad : {"", "M", "-1G", "1.2.3G", "12X", "1.5", "99999999999T", " 1G", "1G "}) {
    auto r = ParseByteSize(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("e.g. 512M"), std::string::npos);
    }
  }
}

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("inferd_memlimit_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    paths_.proc_root = (root_ / "proc").string();
    paths_.cgroup_root = (root_ / "cgroup").string();
    Write("proc/meminfo", "MemTotal:       16384000 kB\nMemFree:  100 kB\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
  MemoryPaths paths_;
};

TEST_F(MemoryLimitTest, NoCgroupLimitMeansMemTotal) {
  Write("proc/self/cgroup", "0::/\n");
  Write("cgroup/memory.max", "max\n");
  auto limit = ReadMemoryLimit(paths_);
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(limit->bytes, int64_t{16384000} * 1024);
  std::string note;
  auto budget = ResolveMemoryBudget("auto", &note, paths_);
  EXPECT_EQ(*budget, static_cast<int64_t>(16384000.0 * 1024 * kAutoBudgetFraction));
  EXPECT_NE(note.find("MemTotal"), std::string::npos) << note;
}

TEST_F(MemoryLimitTest, CgroupV2TightestOnThePath) {
  Write("proc/self/cgroup", "0::/kubepods/pod1/c1\n");
  Write("cgroup/kubepods/memory.max", "8589934592\n");
  Write("cgroup/kubepods/pod1/memory.max", "2147483648\n");
  Write("cgroup/kubepods/pod1/c1/memory.max", "max\n");
  auto limit = ReadMemoryLimit(paths_);
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(limit->bytes, int64_t{2} << 30);
  EXPECT_NE(limit->source.find("pod1/memory.max"), std::string::npos) << limit->source;
  EXPECT_EQ(*ResolveMemoryBudget("auto", nullptr, paths_),
            static_cast<int64_t>(2147483648.0 * kAutoBudgetFraction));
}

TEST_F(MemoryLimitTest, CgroupV1LimitAndItsNoLimitValue) {
  Write("proc/self/cgroup", "4:memory:/docker/abc\n1:cpu:/\n");
  Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
  Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  auto limit = ReadMemoryLimit(paths_);
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(limit->bytes, int64_t{1} << 30);
  Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(ReadMemoryLimit(paths_)->bytes, int64_t{16384000} * 1024) << "no limit: MemTotal";
}

TEST_F(MemoryLimitTest, BudgetTextForms) {
  EXPECT_EQ(*ResolveMemoryBudget("", nullptr, paths_), 0);
  EXPECT_EQ(*ResolveMemoryBudget("none", nullptr, paths_), 0);
  EXPECT_EQ(*ResolveMemoryBudget("256M", nullptr, paths_), int64_t{256} << 20);
  auto bad = ResolveMemoryBudget("lots", nullptr, paths_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--memory-budget"), std::string::npos);
  fs::remove(root_ / "proc/meminfo");
  EXPECT_EQ(ResolveMemoryBudget("auto", nullptr, paths_).status().code(), StatusCode::kUnavailable);
}

TEST(MemoryBudget, ReadsThisProcessResidentMemory) {
  EXPECT_GT(ReadResidentBytes(), 1 << 20);
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(3 << 19), "1.5 MiB");
  // One unit whatever the size, for messages that compare figures.
  EXPECT_EQ(FormatMiB(3 << 19), "1.5 MiB");
  EXPECT_EQ(FormatMiB(int64_t{3} << 30), "3072.0 MiB");
  EXPECT_EQ(FormatMiB(0), "0.0 MiB");
}

TEST_F(MemoryLimitTest, ThePeakIsVmHWMAndTakingItResetsIt) {
  Write("proc/self/status", "Name:\tinferd\nVmPeak:\t  900 kB\nVmHWM:\t    512 kB\nVmRSS:\t 256 kB\n");
  Write("proc/self/clear_refs", "");
  EXPECT_EQ(TakePeakResidentBytes(paths_), 512 * 1024);
  std::ifstream in(root_ / "proc/self/clear_refs");
  std::string written;
  in >> written;
  EXPECT_EQ(written, "5") << "5 resets the peak to the current size";
}

TEST_F(MemoryLimitTest, APeakThatCannotBeResetIsUnknown) {
  Write("proc/self/status", "VmHWM:\t    512 kB\n");
  fs::create_directories(root_ / "proc/self/clear_refs");  // not writable as a file
  EXPECT_EQ(TakePeakResidentBytes(paths_), 0);
  Write("proc/self/status", "VmRSS:\t 256 kB\n");
  fs::remove_all(root_ / "proc/self/clear_refs");
  Write("proc/self/clear_refs", "");
  EXPECT_EQ(TakePeakResidentBytes(paths_), 0) << "no VmHWM line";
}

TEST(MemoryBudget, ThisProcessHasAPeak) {
  EXPECT_GE(TakePeakResidentBytes(), ReadResidentBytes() / 2);
}

}  // namespace
}  // namespace inferd::repository
