// LoadPool: the repository's load threads: a FIFO of jobs run by a fixed
// number of threads, named inferd-load-N.
//
// Loads are background work beside the executors: each thread runs at a lower
// CPU priority (nice +kLoadThreadNice) so that, when cores are short, requests
// to loaded models go first, and each is set up once by `init_thread` (the
// repository gives the backend's intra-op pool one unpinned thread, so that a
// warm-up run stays on one core).
// Recycle replaces every thread with a new one once it has finished its
// current job (common/thread_slots.h): what libtorch keeps per thread for
// every model a load thread ever warmed up goes with the old thread. The new
// thread runs `after_exit` (the repository hands the freed memory back), then
// takes jobs.
// Thread-safety: Post and Recycle from any thread, also from a job. The
// destructor runs the jobs still queued, then joins.
#pragma once

#include <deque>
#include <functional>
#include "common/thread_annotations.h"
#include "common/thread_slots.h"

namespace inferd::repository::internal {

inline constexpr int kLoadThreadNice = 10;

class LoadPool {
 public:
  LoadPool(int threads, std::function<void()> init_thread,
           std::function<void()> after_exit = nullptr);
  ~LoadPool();
  LoadPool(const LoadPool&) = delete;
  LoadPool& operator=(const LoadPool&) = delete;

  void Post(std::function<void()> job);
  void Recycle();
  // Threads replaced so far (tests).
  int recycled() const;

 private:
  void Run(int id, uint64_t generation);

  const std::function<void()> init_thread_;
  const std::function<void()> after_exit_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  ThreadSlots slots_{&mu_};
};

}  // namespace inferd::repository::internal
