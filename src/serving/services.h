// Services: what every front end (the HTTP ports' routes, the gRPC handlers)
// and the request path under them (inference_call.h) need from the server:
// one struct, built once by the serve command and handed by value to each
// port. Its pointers outlive the ports; each may be null where said.
// RequestTap: how a request is seen on its way to a model (traffic mirroring,
// src/mirror/, implements it, so that this folder does not depend on that one).
// Plain data; copied into handlers and completions. Thread-safety: the
// pointed-to objects are thread-safe; `ready` may be called from any thread.
#pragma once

#include <functional>

#include "metrics/registry.h"
#include "repository/model_repository.h"
#include "scheduler/inference_request.h"
#include "serving/request_metrics.h"

namespace inferd::serving {

class RequestTap {
 public:
  virtual ~RequestTap() = default;
  // Called by Submit on the submitting thread before `request` is queued on
  // `model`; may copy the request. Returns the completion to queue instead of
  // `done`: it must call `done` exactly once with the result it gets, before
  // any work of its own. Returns `done` itself to leave the request alone.
  // Must not block.
  virtual scheduler::Completion Tap(const repository::ModelHandle& model,
                                    const scheduler::InferenceRequest& request,
                                    scheduler::Completion done) = 0;
};

struct Services {
  repository::ModelRepository* repository = nullptr;  // required for inference and management
  metrics::Registry* metrics = nullptr;       // may be null: nothing recorded, /metrics is empty
  RequestMetrics* request_metrics = nullptr;  // may be null: no answer is counted
  RequestTap* tap = nullptr;                  // may be null: nothing is mirrored
  std::function<bool()> ready;  // server ready (models loaded, not draining); empty = ready
};

}  // namespace inferd::serving
