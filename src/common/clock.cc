#include "common/clock.h"

#include "common/thread_annotations.h"

namespace inferd {
namespace {

class SteadyClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

void Clock::WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) const {
  mu->AssertHeld();
  if (deadline == TimePoint::max()) {
    cv->Wait(mu);
  } else {
    cv->WaitUntil(mu, deadline);
  }
}

Clock* Clock::Real() {
  static SteadyClock clock;
  return &clock;
}

TimePoint DeadlineAfter(TimePoint from, std::chrono::microseconds after) {
  if (after.count() <= 0) return from;
  // Room left before TimePoint::max(), in whole microseconds.
  const auto room = std::chrono::duration_cast<std::chrono::microseconds>(TimePoint::max() - from);
  if (after >= room) return TimePoint::max();
  return from + std::chrono::duration_cast<Duration>(after);
}

}  // namespace inferd
