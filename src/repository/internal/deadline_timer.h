// DeadlineTimer: one thread that calls `expire(now)` when the earliest
// deadline it was told about has passed on the repository's clock; `expire`
// handles everything due and returns the next deadline (TimePoint::max() when
// none). Used to answer requests that wait for a load past their deadline.
//
// The wait is on real time, re-reading the injected clock at least every
// kRecheck, so that tests that move a fake clock see their deadlines pass
// without sleeping themselves.
// Thread-safety: Wake from any thread, also from inside `expire`.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "common/clock.h"
#include "common/thread_annotations.h"

namespace inferd::repository::internal {

class DeadlineTimer {
 public:
  static constexpr std::chrono::milliseconds kRecheck{20};

  DeadlineTimer(Clock* clock, std::function<TimePoint(TimePoint now)> expire);
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Something is due at `deadline`.
  void Wake(TimePoint deadline);

 private:
  void Run();

  Clock* clock_;
  std::function<TimePoint(TimePoint)> expire_;
  Mutex mu_;
  CondVar cv_;
  TimePoint next_ GUARDED_BY(mu_) = TimePoint::max();
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace inferd::repository::internal
