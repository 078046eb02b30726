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
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void LoadPool::Post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void LoadPool::Run(int id) {
  pthread_setname_np(pthread_self(), ("inferd-load-" + std::to_string(id % 1000)).c_str());
  // Linux applies a nice value per thread (PRIO_PROCESS with a thread id).
  // Failure (a seccomp profile, say) only costs the priority.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kLoadThreadNice);
  if (init_thread_) init_thread_();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // destroy what the job captured before taking the lock again
    lock.lock();
  }
}

}  // namespace inferd::repository::internal
