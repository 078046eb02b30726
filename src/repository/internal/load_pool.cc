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
  slots_.AssertLockedBy(&mu_);
  slots_.Start(std::max(threads, 1), [this](int id, uint64_t generation) { Run(id, generation); });
}

LoadPool::~LoadPool() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    slots_.AssertLockedBy(&mu_);
    threads = slots_.Stop();  // from here no thread is replaced
  }
  cv_.SignalAll();
  for (auto& t : threads) t.join();
}

void LoadPool::Recycle() {
  {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    if (!slots_.Recycle(after_exit_)) return;
  }
  cv_.SignalAll();
}

int LoadPool::recycled() const {
  MutexLock lock(&mu_);
  slots_.AssertLockedBy(&mu_);
  return slots_.recycled();
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
  slots_.AssertLockedBy(&mu_);
  while (true) {
    while (!stopping_ && jobs_.empty() && !slots_.Stale(generation)) cv_.Wait(&mu_);
    if (slots_.Stale(generation)) {
      slots_.HandOver(id);  // a new thread takes this slot
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
