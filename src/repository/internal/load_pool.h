// LoadPool: the repository's load threads: a FIFO of jobs run by a fixed
// number of threads, named inferd-load-N.
//
// Loads are background work beside the executors: each thread runs at a lower
// CPU priority (nice +kLoadThreadNice) so that, when cores are short, requests
// to loaded models go first, and each is set up once by `init_thread` (the
// repository gives the backend's intra-op pool one unpinned thread, so that a
// warm-up run stays on one core).
// Thread-safety: Post from any thread, also from a job. The destructor runs
// the jobs still queued, then joins.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace inferd::repository::internal {

inline constexpr int kLoadThreadNice = 10;

class LoadPool {
 public:
  LoadPool(int threads, std::function<void()> init_thread);
  ~LoadPool();
  LoadPool(const LoadPool&) = delete;
  LoadPool& operator=(const LoadPool&) = delete;

  void Post(std::function<void()> job);

 private:
  void Run(int id);

  std::function<void()> init_thread_;
  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace inferd::repository::internal
