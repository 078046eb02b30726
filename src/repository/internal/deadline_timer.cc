#include "repository/internal/deadline_timer.h"

#include <pthread.h>

#include <algorithm>

namespace inferd::repository::internal {

DeadlineTimer::DeadlineTimer(Clock* clock, std::function<TimePoint(TimePoint now)> expire)
    : clock_(clock), expire_(std::move(expire)), thread_([this] { Run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void DeadlineTimer::Wake(TimePoint deadline) {
  {
    MutexLock lock(&mu_);
    if (deadline >= next_) return;
    next_ = deadline;
  }
  cv_.SignalAll();
}

void DeadlineTimer::Run() {
  pthread_setname_np(pthread_self(), "inferd-deadline");
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (next_ == TimePoint::max()) {
      cv_.Wait(&mu_);
      continue;
    }
    const TimePoint now = clock_->Now();
    if (next_ > now) {
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(next_ - now);
      cv_.WaitFor(&mu_, std::min<std::chrono::nanoseconds>(left, kRecheck));
      continue;
    }
    next_ = TimePoint::max();
    lock.Unlock();
    const TimePoint following = expire_(now);
    lock.Lock();
    next_ = std::min(next_, following);
  }
}

}  // namespace inferd::repository::internal
