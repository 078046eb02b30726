#include "repository/internal/load_pool.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace inferd::repository::internal {

LoadPool::LoadPool(int threads, std::function<void()> init_thread,
                   std::function<void()> after_exit)
    : init_thread_(std::move(init_thread)), after_exit_(std::move(after_exit)) {
  MutexLock lock(&mu_);
  for (int i = 0; i < std::max(threads, 1); ++i) {
    threads_.emplace_back([this, i] { Run(i, 0); });
  }
}

LoadPool::~LoadPool() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopping_ = true;  // from here no thread is replaced
    threads.swap(threads_);
  }
  cv_.SignalAll();
  // A successor joins its predecessor, so joining the last of each slot joins all.
  for (auto& t : threads) t.join();
}

void LoadPool::Recycle() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    ++generation_;
  }
  cv_.SignalAll();
}

int LoadPool::recycled() const {
  MutexLock lock(&mu_);
  return recycled_;
}

void LoadPool::Post(std::function<void()> job) {
  {
    MutexLock lock(&mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.Signal();
}

void LoadPool::Run(int id, uint64_t generation) {
  pthread_setname_np(pthread_self(), ("inferd-load-" + std::to_string(id % 1000)).c_str());
  // Linux applies a nice value per thread (PRIO_PROCESS with a thread id).
  // Failure (a seccomp profile, say) only costs the priority.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kLoadThreadNice);
  if (init_thread_) init_thread_();
  MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && jobs_.empty() && generation == generation_) cv_.Wait(&mu_);
    if (!stopping_ && generation != generation_) {
      // Replaced: the successor joins this thread, then takes over its slot.
      std::thread self = std::move(threads_[static_cast<size_t>(id)]);
      ++recycled_;
      threads_[static_cast<size_t>(id)] =
          std::thread([this, id, generation = generation_, self = std::move(self)]() mutable {
            self.join();
            if (after_exit_) after_exit_();
            Run(id, generation);
          });
      return;
    }
    if (jobs_.empty()) return;  // stopping, nothing left
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.Unlock();
    job();
    job = nullptr;  // destroy what the job captured before taking the lock again
    lock.Lock();
  }
}

}  // namespace inferd::repository::internal
