#include "scheduler/scheduler_accounting.h"

#include <spdlog/spdlog.h>

#include <string>

namespace inferd::scheduler {

SchedulerAccounting::SchedulerAccounting(metrics::Registry* metrics, Clock* clock, size_t max_bytes)
    : clock_(clock), max_bytes_(max_bytes) {
  if (metrics) {
    gauge_ = &metrics->GetGauge(
        "inferd_queue_bytes", "bytes of requests queued or running, all models (--max-queue-bytes)",
        {});
  }
}

Status SchedulerAccounting::CheckBytes(size_t bytes,
                                       const std::shared_ptr<metrics::Counter>& refused) {
  if (max_bytes_ == 0 || bytes <= max_bytes_ - held_bytes_) return Status::Ok();  // held <= max
  Count(refused);
  const std::string what = "the server holds " + std::to_string(held_bytes_) +
                           " bytes of queued and running requests; this one's " +
                           std::to_string(bytes) + " would pass its limit (--max-queue-bytes " +
                           std::to_string(max_bytes_) + ")";
  // At most one log line per 10 s: a flood must not become a flood of lines.
  const TimePoint now = clock_->Now();
  if (!logged_once_ || now - last_log_ >= std::chrono::seconds(10)) {
    logged_once_ = true;
    last_log_ = now;
    spdlog::warn("refusing requests with 503: {}", what);
  }
  return Unavailable(what + "; retry later");
}

void SchedulerAccounting::Hold(size_t bytes) {
  SetHeld(held_bytes_ + bytes);
  ++outstanding_;
}

bool SchedulerAccounting::Release(size_t bytes, size_t requests) {
  SetHeld(held_bytes_ - bytes);
  outstanding_ -= requests;
  return outstanding_ == 0;
}

void SchedulerAccounting::SetHeld(size_t bytes) {
  held_bytes_ = bytes;
  if (gauge_) gauge_->Set(static_cast<double>(held_bytes_));
}

}  // namespace inferd::scheduler
