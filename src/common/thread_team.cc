#include "common/thread_team.h"

#include <sched.h>
#include <time.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace inferd {
namespace {

std::mutex& TeamsMutex() {
  static std::mutex mu;
  return mu;
}

std::map<int, std::vector<int>>& Teams() {
  static auto* teams = new std::map<int, std::vector<int>>();  // never destroyed: used at exit
  return *teams;
}

// Under TeamsMutex(): the threads LowerToIdle lowered, and whether the
// process is ending (RaiseLoweredForExit was called).
std::set<int>& Lowered() {
  static auto* lowered = new std::set<int>();  // never destroyed: used at exit
  return *lowered;
}
bool exiting = false;
std::vector<int>& IdleCores() {
  static auto* cores = new std::vector<int>();  // never destroyed: used at exit
  return *cores;
}

}  // namespace

void NoteThreadTeam(int owner, std::vector<int> members) {
  std::lock_guard<std::mutex> lock(TeamsMutex());
  Teams()[owner] = std::move(members);
}

std::vector<int> ThreadTeamOf(int owner) {
  std::lock_guard<std::mutex> lock(TeamsMutex());
  auto it = Teams().find(owner);
  return it == Teams().end() ? std::vector<int>{} : it->second;
}

void ForgetThreadTeam(int owner) {
  std::lock_guard<std::mutex> lock(TeamsMutex());
  Teams().erase(owner);
}

void SetIdleCores(std::vector<int> cores) {
  std::lock_guard<std::mutex> lock(TeamsMutex());
  IdleCores() = std::move(cores);
}

int LowerToIdle(int owner) {
  // Lowered under the mutex, so that none is lowered after
  // RaiseLoweredForExit raised the others.
  std::lock_guard<std::mutex> lock(TeamsMutex());
  if (exiting) return 0;
  std::vector<int> threads;
  if (auto it = Teams().find(owner); it != Teams().end()) threads = it->second;
  threads.insert(threads.begin(), owner);
  cpu_set_t spread;
  CPU_ZERO(&spread);
  for (int core : IdleCores()) CPU_SET(core, &spread);
  int lowered = 0;
  for (int tid : threads) {
    sched_param param{};
    if (sched_setscheduler(tid, SCHED_IDLE, &param) == 0) {
      // After the lowering: never a normal thread on a core not its own.
      if (!IdleCores().empty()) (void)sched_setaffinity(tid, sizeof(spread), &spread);
      Lowered().insert(tid);
      ++lowered;
    }
  }
  return lowered;
}

std::optional<std::chrono::nanoseconds> ThreadCpuTime(int tid) {
  // Linux's CPU clock of one thread: ~tid << 3, per-thread (4), scheduler
  // time (2); the encoding glibc's pthread_getcpuclockid uses.
  const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return std::nullopt;
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

int RaiseLoweredForExit() {
  std::lock_guard<std::mutex> lock(TeamsMutex());
  exiting = true;
  int failed = 0;
  for (int tid : Lowered()) {
    sched_param param{};
    if (sched_setscheduler(tid, SCHED_OTHER, &param) != 0 && errno != ESRCH) ++failed;
  }
  return failed;
}

}  // namespace inferd
