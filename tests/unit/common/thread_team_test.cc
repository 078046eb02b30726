// ThreadTeam: LowerToIdle lowers a thread and its recorded team to
// SCHED_IDLE, allowed on the idle cores; RaiseLoweredForExit gives them SCHED_OTHER back (with
// CAP_SYS_NICE) and lowers none after it. The raise is for a process about
// to end, so each case runs in a child process of its own (a death test).
#include "common/thread_team.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace inferd {
namespace {

// CAP_SYS_NICE (capability 23) among the effective ones in /proc.
bool HasSysNice() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 23) & 1;
  }
  return false;
}

// Two threads that wait until told to end: an owner and its team of one.
class TwoThreads {
 public:
  TwoThreads() {
    for (int i = 0; i < 2; ++i) {
      threads_[i] = std::thread([this, i] {
        tids_[i] = static_cast<int>(::syscall(SYS_gettid));
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      });
    }
    while (tids_[0] == 0 || tids_[1] == 0) std::this_thread::yield();
  }
  ~TwoThreads() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  int owner() const { return tids_[0]; }
  int member() const { return tids_[1]; }

 private:
  std::thread threads_[2];
  std::atomic<int> tids_[2] = {0, 0};
  std::atomic<bool> stop_{false};
};

// 0 when every step did what the header says; else prints the step.
int LowerThenRaise() {
  TwoThreads t;
  NoteThreadTeam(t.owner(), {t.member()});
  SetIdleCores({0});  // the threads start allowed on every core
  if (LowerToIdle(t.owner()) != 2) return std::fprintf(stderr, "lowered != 2\n"), 1;
  for (int tid : {t.owner(), t.member()}) {
    if (sched_getscheduler(tid) != SCHED_IDLE) return std::fprintf(stderr, "not idle\n"), 2;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1 ||
        !CPU_ISSET(0, &set)) {
      return std::fprintf(stderr, "not on the idle cores (%d cpus)\n", CPU_COUNT(&set)), 7;
    }
  }
  const int failed = RaiseLoweredForExit();
  // Leaving SCHED_IDLE needs CAP_SYS_NICE; without it both stay lowered.
  const bool may = HasSysNice();
  if (failed != (may ? 0 : 2)) return std::fprintf(stderr, "failed = %d\n", failed), 3;
  for (int tid : {t.owner(), t.member()}) {
    if (sched_getscheduler(tid) != (may ? SCHED_OTHER : SCHED_IDLE)) {
      return std::fprintf(stderr, "policy %d after the raise\n", sched_getscheduler(tid)), 4;
    }
  }
  // The process ends: none is lowered from now on.
  if (LowerToIdle(t.owner()) != 0) return std::fprintf(stderr, "lowered after the raise\n"), 5;
  if (sched_getscheduler(t.owner()) == SCHED_IDLE && may) return 6;
  ForgetThreadTeam(t.owner());
  return 0;
}

TEST(ThreadTeamDeathTest, RaiseForExitUndoesTheLoweringAndStopsIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(LowerThenRaise()), ::testing::ExitedWithCode(0), "");
}

TEST(ThreadTeamDeathTest, NothingLoweredRaisesNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(RaiseLoweredForExit()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace inferd
