// InferenceRequest / InferenceResponse: what a front end hands the scheduler and
// gets back. Native types only: JSON and protobuf stay in http/ and grpc/.
//
// Ownership: the scheduler owns a request from a successful Enqueue until it
// calls the completion, exactly once, on an executor thread. When Enqueue
// itself fails, the completion is NOT called and the Status is returned
// instead; Scheduler::Enqueue then leaves the request and the completion with
// the caller (it moves from them only on success), so that they can be queued
// elsewhere (repository::ServedModel hands them to a reloaded version's
// replacement).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/tensor.h"

namespace inferd::scheduler {

// A raw payload for models with `preprocess:` (an image, a text), decoded on the
// executor thread inside the core budget.
struct RawInput {
  std::string content_type;  // e.g. image/jpeg, text/plain; may be empty
  std::string bytes;
};

// The largest priority level a request may ask for.
inline constexpr int kMaxPriority = 1000000;
// The level of a mirrored copy (mirror/mirror.h), below every level a client
// may ask for: such a request runs only on spare capacity. Such batches run
// on at most all executors but one (at least one), after every other level
// of their queue; a copy sent while that many run and another waits is
// refused at Enqueue (kResourceExhausted, kNoSpareExecutor) rather than wait.
inline constexpr int kSparePriority = kMaxPriority + 1;
inline constexpr const char* kNoSpareExecutor = "no spare executor for a mirrored copy";

struct InferenceRequest {
  std::string id;
  // Either tensors (in any order, matched to the config by name; each with the
  // batch dim first) or raw payloads (one per batch item) for the preprocessor.
  std::vector<NamedTensor> inputs;
  std::vector<RawInput> raw;
  TimePoint enqueue_time{};
  // Set by the front end from a per-request timeout; left at max(), the
  // scheduler sets it from the model's request_timeout_ms.
  TimePoint deadline = TimePoint::max();
  // KServe v2 `priority`, as in Triton: 1 is the highest level, larger numbers
  // run later; 0 (absent) is the default level, between 1 and 2. Front ends
  // refuse values outside [0, kMaxPriority] (400).
  int priority = 0;
  // Set by the front end when the client went away; checked before compute.
  std::function<bool()> is_cancelled;
};

struct LabelScore {
  std::string label;
  float score = 0;
};

struct InferenceResponse {
  std::string id;
  std::vector<NamedTensor> outputs;  // batch dim first, in the config's output order
  // Filled by a classification postprocess: one list per batch item.
  std::vector<std::vector<LabelScore>> labels;
  // Timings for metrics, in microseconds.
  int64_t queue_us = 0;
  int64_t preprocess_us = 0;  // this request's pre-processing on the executor
  int64_t compute_us = 0;
  int batch_size = 0;  // size of the batch this request ran in (in items)
};

using Completion = std::function<void(StatusOr<InferenceResponse>)>;

}  // namespace inferd::scheduler
