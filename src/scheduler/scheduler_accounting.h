// SchedulerAccounting: what the scheduler holds, all models together: the
// bytes of the requests queued or running (Options::max_queue_bytes) and how
// many requests are outstanding (WaitIdle), with the rate limit of its log
// line about refusals.
//
// Thread-safety: none of its own; the scheduler guards it with its mutex.
#pragma once

#include <cstddef>
#include <memory>

#include "common/clock.h"
#include "common/status.h"
#include "metrics/registry.h"

namespace inferd::scheduler {

// Adds `n` to `counter` when both are set.
inline void Count(const std::shared_ptr<metrics::Counter>& counter, size_t n = 1) {
  if (counter && n) counter->Increment(static_cast<double>(n));
}

class SchedulerAccounting {
 public:
  // `metrics` may be null; `max_bytes` 0 = no limit.
  SchedulerAccounting(metrics::Registry* metrics, Clock* clock, size_t max_bytes);

  // kUnavailable (503) when `bytes` more would pass max_bytes; counts the
  // refusal in `refused` and logs it at most every 10 s.
  Status CheckBytes(size_t bytes, const std::shared_ptr<metrics::Counter>& refused);
  // A request of `bytes` was queued.
  void Hold(size_t bytes);
  // `requests` requests of `bytes` in all were answered (or their bytes
  // freed); true when none is outstanding any more.
  bool Release(size_t bytes, size_t requests);
  size_t held_bytes() const { return held_bytes_; }
  size_t outstanding() const { return outstanding_; }

 private:
  void SetHeld(size_t bytes);

  Clock* const clock_;
  const size_t max_bytes_;
  metrics::Gauge* gauge_ = nullptr;
  size_t held_bytes_ = 0;
  size_t outstanding_ = 0;  // queued + running
  bool logged_once_ = false;
  TimePoint last_log_{};
};

}  // namespace inferd::scheduler
