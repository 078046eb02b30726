#include "repository/internal/load_pool.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace inferd::repository::internal {

LoadPool::LoadPool(int threads, std::function<void()> init_thread)
    : init_thread_(std::move(init_thread)) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this, i] { Run(i); });
}

LoadPool::~LoadPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (auto& t : threads_) t.join();
}

void LoadPool::Post(std::function<void()> job) {
  {
    MutexLock lock(&mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.Signal();
}

void LoadPool::Run(int id) {
  pthread_setname_np(pthread_self(), ("inferd-load-" + std::to_string(id % 1000)).c_str());
  // Linux applies a nice value per thread (PRIO_PROCESS with a thread id).
  // Failure (a seccomp profile, say) only costs the priority.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kLoadThreadNice);
  if (init_thread_) init_thread_();
  MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && jobs_.empty()) cv_.Wait(&mu_);
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
