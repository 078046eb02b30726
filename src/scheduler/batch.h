// QueuedRequest and Batch: a request as the scheduler holds it, and what one
// executor runs. Ground-floor types of scheduler/, shared by the queue, the
// runner, the watchdog and the scheduler.
//
// Ownership: a QueuedRequest owns its request and its completion; whoever
// holds it answers it exactly once through `done` (the scheduler makes `done`
// safe to race: see AnswerOnce).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "scheduler/answer_once.h"
#include "scheduler/inference_request.h"

namespace inferd::scheduler {

struct QueuedRequest {
  InferenceRequest request;
  Completion done;
  int items = 1;  // batch items this request carries
  uint64_t seq = 0;
  size_t bytes = 0;  // its tensors and raw payloads, for Scheduler's max_queue_bytes
  // When it joined a batch that was already running (TakeMore); zero when it
  // was taken with the batch (its queue time ends at the batch's start).
  TimePoint joined{};
  // Its pre-processing on an executor (kept when a runner gives it back to
  // the queue already pre-processed: batch_runner.h).
  int64_t preprocess_us = 0;
  // Whether `done` was called already (the executor or the watchdog answered
  // it): the watchdog must not count an answered request as one nobody waits
  // for when its client goes away after the answer.
  std::shared_ptr<const AnswerOnce> once = nullptr;
};

// The sum of their `bytes`.
size_t SumBytes(const std::vector<QueuedRequest>& requests);

// What one executor runs: requests of one model, in order.
struct Batch {
  std::vector<QueuedRequest> requests;
  int items = 0;
};

}  // namespace inferd::scheduler
