// The request path shared by every inference front end (TorchScript's
// /predictions and KServe v2 over HTTP, KServe v2 over gRPC): resolve the
// model, submit the request to its queue, count the answer.
//
// A front end, given the server's Services (services.h), parses its wire
// format into a scheduler::InferenceRequest, calls AcquireModel and Submit,
// encodes the result on its own network thread and then calls CountAnswer
// with the code the client was sent, so that both protocols are counted
// alike. Thread-safe (no state of its own).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "repository/model_repository.h"
#include "scheduler/inference_request.h"
#include "serving/call.h"
#include "serving/request_metrics.h"
#include "serving/services.h"

namespace inferd::serving {

// A model version acquired for one request.
struct AcquiredModel {
  repository::ModelHandle handle;
  // How long the request waited for the model to load (a cold start); < 0: it
  // found the model ready.
  double cold_start_ms = -1;
};

// A ready version of `model`; `version` as the client wrote it ("" = the
// default). When the model is not in memory but may load on demand (lazy, or
// evicted under the memory budget) the repository loads it and the call
// waits, up to call.deadline (max() = the model's request_timeout_ms).
// `then` runs exactly once: on this thread when the model was ready or the
// call failed at once, else on a repository thread when the load ends or the
// deadline passes; a front end must not block there for long. On failure the
// error is counted (unknown names under model="") and passed on: kNotFound,
// kInvalidArgument (a malformed version or model name), kUnavailable (not
// ready, unloaded by hand, no room in the budget), kDeadlineExceeded.
void AcquireModel(const Services& services, const Call& call, const std::string& model,
                  std::string_view version, std::function<void(StatusOr<AcquiredModel>)> then);

// AcquireModel for a caller that may block: waits on this thread for a load.
StatusOr<repository::ModelHandle> ResolveModel(const Services& services, const Call& call,
                                               const std::string& model, std::string_view version);

// Counts one answer: `code` is what the client was sent; `version` 0 = none;
// `response` is null unless the request was computed.
void CountAnswer(const Services& services, const Call& call, const std::string& model,
                 int64_t version, StatusCode code,
                 const scheduler::InferenceResponse* response = nullptr);

// Enqueues `request` on `model`, with the call's cancellation check, and its
// deadline bounding the request's. `done` is called exactly once: on an
// executor thread with the result, or, when the scheduler refuses the request
// at once (invalid, queue full, draining), on this thread with that Status.
// The version stays loaded until `done` has returned. `services.tap`, when
// set, sees the request first (RequestTap).
void Submit(const Services& services, const repository::ModelHandle& model, scheduler::InferenceRequest request,
            const Call& call, scheduler::Completion done);

}  // namespace inferd::serving
