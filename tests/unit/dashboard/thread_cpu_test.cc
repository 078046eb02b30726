#include "dashboard/thread_cpu.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace inferd::dashboard {
namespace {

TEST(ThreadCpu, ReadsExecutorIdsFromThreadNames) {
  EXPECT_EQ(ExecutorIdFromThreadName("inferd-exec-3\n"), 3);
  EXPECT_EQ(ExecutorIdFromThreadName("inferd-exec-12"), 12);
  EXPECT_FALSE(ExecutorIdFromThreadName("inferd-exec-"));
  EXPECT_FALSE(ExecutorIdFromThreadName("inferd-exec-x"));
  EXPECT_FALSE(ExecutorIdFromThreadName("inferd-load-1"));
  EXPECT_FALSE(ExecutorIdFromThreadName("inferd"));
}

TEST(ThreadCpu, ReadsUserAndSystemTicks) {
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  // Fields 14 and 15 (utime, stime) after a command name with spaces and ')'.
  auto s =
      CpuSecondsFromStat("42 (a b) c) S 1 2 3 4 5 6 7 8 9 10 150 50 0 0 20 0 1 0 99 1000 10 0 0");
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 200 / hz);
  EXPECT_FALSE(CpuSecondsFromStat("not a stat line"));
}

// A thread named like an executor that spins is found, with its CPU time.
TEST(ThreadCpu, FindsALiveExecutorThreadOfThisProcess) {
  std::atomic<bool> stop{false};
  std::atomic<bool> named{false};
  std::thread spinner([&] {
    pthread_setname_np(pthread_self(), "inferd-exec-77");
    named = true;
    volatile uint64_t x = 0;
    while (!stop) x = x + 1;
  });
  while (!named) std::this_thread::yield();
  // Ticks are 10 ms: wait until one shows (a loaded machine may be slow to give it).
  std::map<int, double> cpu;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    cpu = ExecutorCpuSeconds("/proc/self");
    if (cpu.count(77) && cpu[77] > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  spinner.join();
  ASSERT_TRUE(cpu.count(77));
  EXPECT_GT(cpu[77], 0.0);
  EXPECT_GT(ProcessCpuSeconds("/proc/self"), 0.0);
  EXPECT_TRUE(ExecutorCpuSeconds("/nonexistent").empty());
}

}  // namespace
}  // namespace inferd::dashboard
