#include "common/thread_team.h"

#include <sched.h>

#include <map>
#include <mutex>
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

int LowerToIdle(int owner) {
  std::vector<int> threads = ThreadTeamOf(owner);
  threads.insert(threads.begin(), owner);
  int lowered = 0;
  for (int tid : threads) {
    sched_param param{};
    if (sched_setscheduler(tid, SCHED_IDLE, &param) == 0) ++lowered;
  }
  return lowered;
}

}  // namespace inferd
