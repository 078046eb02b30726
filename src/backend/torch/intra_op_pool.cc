#include "backend/torch/intra_op_pool.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>

#include "common/thread_team.h"

namespace inferd::backend {
namespace {

struct ThreadWidth {
  std::vector<int> cores;
  int threads = 1;
  bool operator==(const ThreadWidth&) const = default;
};

// The width the calling thread's team has, and the one asked for next.
ThreadWidth& Applied() {
  thread_local ThreadWidth width;
  return width;
}
ThreadWidth& Requested() {
  thread_local ThreadWidth width;
  return width;
}

int PinCurrentThread(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace

void LimitInterOpThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception& e) {
      // Only possible when inter-op work already ran; harmless, but say so.
      spdlog::warn("torch: could not set inter-op threads to 1: {}", e.what());
    }
  });
}

Status ConfigureIntraOpPool(const std::vector<int>& cores, int num_threads) {
  LimitInterOpThreads();
  const int n = cores.empty() ? std::max(num_threads, 1) : static_cast<int>(cores.size());
  try {
    // ATen initialises each thread's OpenMP thread count lazily from a
    // process-wide value at its first parallel call; run that first so that
    // another executor's count can never overwrite this thread's later.
    at::internal::lazy_init_num_threads();
    at::set_num_threads(n);
  } catch (const std::exception& e) {
    return Internal(std::string("torch: set_num_threads failed: ") + e.what());
  }
  Applied() = Requested() = {cores, num_threads};
  // The team's thread ids, for whoever gives this thread up while it is
  // stuck in a forward (common/thread_team.h): they run that forward too.
  std::vector<int> team(static_cast<size_t>(n), 0);
  if (cores.empty()) {
    if (n > 1) {
#pragma omp parallel num_threads(n)
      team[static_cast<size_t>(omp_get_thread_num()) % team.size()] = static_cast<int>(gettid());
      NoteThreadTeam(static_cast<int>(gettid()), {team.begin() + 1, team.end()});
    }
    return Status::Ok();
  }

  std::atomic<int> failed_core{-1};
  std::atomic<int> failed_err{0};
  std::atomic<int> members{0};
#pragma omp parallel num_threads(n)
  {
    const int i = omp_get_thread_num();
    members.fetch_add(1);
    team[static_cast<size_t>(i) % team.size()] = static_cast<int>(gettid());
    const int err = PinCurrentThread(cores[i]);
    if (err != 0) {
      failed_core.store(cores[i]);
      failed_err.store(err);
    }
  }
  if (n > 1) NoteThreadTeam(static_cast<int>(gettid()), {team.begin() + 1, team.end()});
  if (failed_core.load() >= 0) {
    return Internal("cannot pin an intra-op thread to core " + std::to_string(failed_core.load()) +
                    ": " + std::strerror(failed_err.load()));
  }
  if (members.load() != n) {
    return Internal("the OpenMP runtime gave " + std::to_string(members.load()) +
                    " intra-op threads instead of " + std::to_string(n));
  }
  return Status::Ok();
}

void RequestCallWidth(const std::vector<int>& cores, int num_threads) {
  Requested() = {cores, num_threads};
}

Status ApplyCallWidth() {
  if (Requested() == Applied()) return Status::Ok();
  Applied() = Requested();
  return ConfigureIntraOpPool(Applied().cores, Applied().threads);
}

std::vector<int> CurrentThreadCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  return cores;
}

}  // namespace inferd::backend
