// Detection on this machine, under limits set by the test itself in a forked
// child: an affinity mask of one CPU (what `taskset -c 0` does), and a cgroup
// with a 1-CPU quota (needs root and a writable cgroup cpu controller; skipped
// with the reason otherwise). The child reports through its exit code.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "topology/cpu_budget.h"

namespace inferd::topology {
namespace {

namespace fs = std::filesystem;

// Child exit codes.
constexpr int kChildOk = 0;
constexpr int kChildSetupFailed = 2;
constexpr int kChildDetectFailed = 3;
constexpr int kChildWrongBudget = 10;  // + usable cores (capped)

int ExitCodeForBudget(const StatusOr<CpuBudget>& b, bool want_quota) {
  if (!b.ok()) return kChildDetectFailed;
  bool good = b->usable_cores() == 1 && (!want_quota || b->quota_cores == 1);
  return good ? kChildOk : kChildWrongBudget + std::min(b->usable_cores(), 100);
}

// Runs `body` in a forked child and returns its exit status (or -1).
template <typename F>
int RunInChild(F body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::string Describe(int code) {
  if (code == kChildSetupFailed) return "the child could not set up its limit";
  if (code == kChildDetectFailed) return "DetectCpuBudget failed in the child";
  if (code >= kChildWrongBudget) {
    return "the child saw " + std::to_string(code - kChildWrongBudget) + " usable cores, want 1";
  }
  return "child exit code " + std::to_string(code);
}

bool WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LiveLimitsTest, AffinityOfOneCpuGivesOneUsableCore) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) ++cpu;  // cpu 0 unless excluded
  ASSERT_LT(cpu, CPU_SETSIZE);

  int code = RunInChild([cpu] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) return kChildSetupFailed;
    auto b = DetectCpuBudget(DetectOptions{});
    if (b.ok() && (b->usable_cores() != 1 || b->usable[0].cpu != cpu)) {
      return kChildWrongBudget + std::min(b->usable_cores(), 100);
    }
    return ExitCodeForBudget(b, /*want_quota=*/false);
  });
  EXPECT_EQ(code, kChildOk) << Describe(code);
}

// A cgroup created for the test and removed afterwards.
class ScratchCgroup {
 public:
  explicit ScratchCgroup(fs::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    created_ = fs::create_directory(dir_, ec);
  }
  ~ScratchCgroup() {
    if (created_) rmdir(dir_.c_str());
  }
  bool created() const { return created_; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  bool created_ = false;
};

// Where a 1-CPU quota can be set, and how: "" when nowhere (with `why`).
std::string FindWritableCpuController(std::string* why) {
  const std::string name = "inferd-topology-test-" + std::to_string(getpid());
  for (const fs::path& root : {fs::path("/sys/fs/cgroup"), fs::path("/sys/fs/cgroup/unified")}) {
    std::string controllers = ReadFile(root / "cgroup.subtree_control");
    if (controllers.find("cpu") != std::string::npos && access(root.c_str(), W_OK) == 0) {
      return "v2:" + (root / name).string();
    }
  }
  const fs::path v1 = "/sys/fs/cgroup/cpu";
  if (fs::exists(v1 / "cpu.cfs_quota_us") && access(v1.c_str(), W_OK) == 0) {
    return "v1:" + (v1 / name).string();
  }
  *why =
      "no writable cgroup cpu controller (v2 root with cpu in cgroup.subtree_control, or v1 "
      "/sys/fs/cgroup/cpu); uid " +
      std::to_string(getuid());
  return "";
}

TEST(LiveLimitsTest, CgroupQuotaOfOneCpuGivesOneUsableCore) {
  std::string why;
  std::string where = FindWritableCpuController(&why);
  if (where.empty()) GTEST_SKIP() << why;
  const bool v2 = where.rfind("v2:", 0) == 0;
  ScratchCgroup group(where.substr(3));
  if (!group.created()) GTEST_SKIP() << "cannot create " << group.dir() << " (not root?)";
  bool set = v2 ? WriteFile(group.dir() / "cpu.max", "100000 100000")
                : WriteFile(group.dir() / "cpu.cfs_period_us", "100000") &&
                      WriteFile(group.dir() / "cpu.cfs_quota_us", "100000");
  if (!set) GTEST_SKIP() << "cannot set a CPU quota in " << group.dir();

  const fs::path procs = group.dir() / "cgroup.procs";
  int code = RunInChild([&procs] {
    if (!WriteFile(procs, std::to_string(getpid()))) return kChildSetupFailed;
    return ExitCodeForBudget(DetectCpuBudget(DetectOptions{}), /*want_quota=*/true);
  });
  EXPECT_EQ(code, kChildOk) << Describe(code) << " in " << group.dir();
}

}  // namespace
}  // namespace inferd::topology
