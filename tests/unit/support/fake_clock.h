// FakeClock: a Clock whose time moves only when a test says so (Advance).
//
// Waits through it (Clock::WaitUntil) never sleep for the time they ask: a
// waiter wakes when signalled, and otherwise looks at the fake time again
// every millisecond of real time, so that a thread waiting for a fake
// deadline sees it pass soon after Advance moves the time past it, without
// the test sleeping. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/clock.h"
#include "common/thread_annotations.h"

namespace inferd::test_support {

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return TimePoint() + std::chrono::microseconds(now_us.load()); }
  void WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) const override {
    mu->AssertHeld();
    if (Now() >= deadline) return;
    cv->WaitFor(mu, std::chrono::milliseconds(1));
  }
  void Advance(std::chrono::microseconds d) { now_us += d.count(); }
  std::atomic<int64_t> now_us{1'000'000};
};

}  // namespace inferd::test_support
