#include "grpc/internal/answer_thread.h"

#include <pthread.h>

namespace inferd::grpc::internal {

AnswerThread::AnswerThread() : thread_([this] { Run(); }) {}

bool AnswerThread::Post(std::function<void()> answer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    queue_.push_back(std::move(answer));
  }
  cv_.notify_one();
  return true;
}

void AnswerThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void AnswerThread::Run() {
  pthread_setname_np(pthread_self(), "inferd-grpc-tx");
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::deque<std::function<void()>> batch;
    batch.swap(queue_);
    lock.unlock();
    for (auto& answer : batch) answer();
    batch.clear();  // releases the calls before taking the lock again
    lock.lock();
  }
}

}  // namespace inferd::grpc::internal
