// The request path shared by every inference front end (TorchScript's
// /predictions and KServe v2 over HTTP, KServe v2 over gRPC): resolve the
// model, submit the request to its queue, count the answer.
//
// A front end parses its wire format into a scheduler::InferenceRequest, calls
// ResolveModel and Submit, encodes the result on its own network thread and
// then calls CountAnswer with the code the client was sent, so that both
// protocols are counted alike. Thread-safe (no state of its own).
#pragma once

#include <string>
#include <string_view>

#include "repository/model_repository.h"
#include "scheduler/inference_request.h"
#include "serving/call.h"
#include "serving/request_metrics.h"

namespace inferd::serving {

// What the request path needs from the server; the pointers outlive the calls.
struct Services {
  repository::ModelRepository* repository = nullptr;
  RequestMetrics* metrics = nullptr;  // may be null: nothing is counted
};

// A ready version of `model`; `version` as the client wrote it ("" = the
// default). On failure the error is counted (unknown names under model="")
// and returned: kNotFound, kInvalidArgument (a malformed version),
// kUnavailable (not ready).
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
// The handle is held until `done` has returned.
void Submit(const repository::ModelHandle& model, scheduler::InferenceRequest request,
            const Call& call, scheduler::Completion done);

}  // namespace inferd::serving
