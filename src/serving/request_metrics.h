// RequestMetrics: the per-request series that every front end records, the
// same way whatever the protocol.
//
//   inferd_requests_total{model, version, protocol, code} counter: protocol = http | grpc,
//                                                        code = the StatusCode's name (OK,
//                                                        INVALID_ARGUMENT, NOT_FOUND, ...), the
//                                                        same for both protocols
//   inferd_request_duration_seconds{model}              histogram, request read to response built
//   inferd_queue_duration_seconds{model}                histogram, InferenceResponse::queue_us
//   inferd_preprocess_duration_seconds{model}           histogram, InferenceResponse::preprocess_us
//   inferd_compute_duration_seconds{model}              histogram, InferenceResponse::compute_us
// Batch sizes are recorded per forward by the scheduler's BatchRunner (inferd_batch_size).
// Requests for unknown models count under model="" so that clients cannot
// grow the label set at will. A model's series are removed when no version of
// it is left in memory (repository/internal/cache_metrics.h): they start again
// from 0 at its next request. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "metrics/registry.h"
#include "scheduler/inference_request.h"
#include "serving/call.h"

namespace inferd::serving {

class RequestMetrics {
 public:
  explicit RequestMetrics(metrics::Registry* registry) : registry_(registry) {}

  // `version` 0 = not resolved; `response` may be null (the request failed).
  void Record(const Call& call, const std::string& model, int64_t version, StatusCode code,
              const scheduler::InferenceResponse* response);

 private:
  metrics::Registry* registry_;  // may be null: nothing is recorded
};

}  // namespace inferd::serving
