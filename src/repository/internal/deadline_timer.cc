#include "repository/internal/deadline_timer.h"

#include <pthread.h>

#include <algorithm>

namespace inferd::repository::internal {

DeadlineTimer::DeadlineTimer(Clock* clock, std::function<TimePoint(TimePoint now)> expire)
    : clock_(clock), expire_(std::move(expire)), thread_([this] { Run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DeadlineTimer::Wake(TimePoint deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (deadline >= next_) return;
    next_ = deadline;
  }
  cv_.notify_all();
}

void DeadlineTimer::Run() {
  pthread_setname_np(pthread_self(), "inferd-deadline");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (next_ == TimePoint::max()) {
      cv_.wait(lock);
      continue;
    }
    const TimePoint now = clock_->Now();
    if (next_ > now) {
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(next_ - now);
      cv_.wait_for(lock, std::min<std::chrono::nanoseconds>(left, kRecheck));
      continue;
    }
    next_ = TimePoint::max();
    lock.unlock();
    const TimePoint following = expire_(now);
    lock.lock();
    next_ = std::min(next_, following);
  }
}

}  // namespace inferd::repository::internal
