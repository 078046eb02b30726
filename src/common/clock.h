// Clock: steady time, injectable so that tests of deadlines, batching and
// watchdogs need no sleeps: a thread that waits for a time waits through its
// clock (WaitUntil), so a fake clock decides when the time has come.
// Implementations must be safe to call from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace inferd {

// common/thread_annotations.h; not included here, since its macros clash
// with abseil's in files that include gRPC's headers beside this one.
class CondVar;
class Mutex;

using TimePoint = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Waits on `cv` with `mu` held until it is signalled or Now() reaches
  // `deadline` (TimePoint::max(): no time limit). Like every condition wait
  // it may return early: callers re-check their condition and the time in a
  // loop. The real clock waits on the steady clock; a fake clock returns
  // once the test has moved its time past `deadline`, or sooner.
  // `mu` must be held (the analysis cannot check it through this header).
  virtual void WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) const;
  // The process-wide real clock.
  static Clock* Real();
};

// `from + after`, saturating at TimePoint::max(): a client's timeout of 2^63
// microseconds must mean "no deadline", not wrap round into the past (signed
// overflow). A negative `after` gives `from`.
TimePoint DeadlineAfter(TimePoint from, std::chrono::microseconds after);

// Whole microseconds / milliseconds from a to b (for metrics, messages, logs).
inline int64_t MicrosBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration_cast<std::chrono::microseconds>(b - a).count();
}
inline int64_t MillisBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace inferd
