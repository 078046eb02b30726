// AnswerOnce: a request's completion that two threads may race to call: the
// executor running its batch, and the scheduler's watchdog answering it at its
// deadline (504) or when its batch is given up. The first call answers; every
// later one is dropped and says so (a late result, counted by the caller).
//
// Thread-safety: Answer may be called from any thread, any number of times.
// Ownership: holds the front end's completion until the first Answer, which
// calls it and then lets it go.
#pragma once

#include <atomic>
#include <memory>

#include "scheduler/inference_request.h"

namespace inferd::scheduler {

class AnswerOnce {
 public:
  explicit AnswerOnce(Completion done) : done_(std::move(done)) {}

  // Calls the completion with `result` unless the request was answered
  // already; true when this call answered it.
  bool Answer(StatusOr<InferenceResponse> result) {
    if (answered_.exchange(true, std::memory_order_acq_rel)) return false;
    Completion done = std::move(done_);
    done(std::move(result));
    return true;
  }
  bool answered() const { return answered_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> answered_{false};
  Completion done_;  // written once more, by the one call that answers
};

// A completion that answers through `once` and counts what came too late:
// `on_late` runs (on the caller's thread) when a successful result arrives
// for a request that was answered already. The result is dropped.
inline Completion RaceSafe(std::shared_ptr<AnswerOnce> once, std::function<void()> on_late) {
  return [once = std::move(once), on_late = std::move(on_late)](StatusOr<InferenceResponse> r) {
    const bool result = r.ok();
    if (!once->Answer(std::move(r)) && result && on_late) on_late();
  };
}

}  // namespace inferd::scheduler
