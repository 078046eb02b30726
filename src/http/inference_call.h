// The HTTP side of the request path that every protocol shares
// (serving/inference_call.h): takes the model and version from the path,
// answers errors as JSON, and encodes the answer on the connection's thread.
//
// The model is acquired from the repository, which may load it first: then
// the rest of the request's handling runs on the repository's load thread
// when the load ends (the body is parsed there), so that the network thread
// never waits. An answer to a request that waited for a load carries
// `X-Inferd-Cold-Start-Ms`: how long it waited; `X-Inferd-Load-Ms`: how long
// the load itself ran; `X-Inferd-Load-Wait-Ms`: how long the load waited
// before it ran (for a load thread, for room, for a first load measured
// alone). The rest of the wait was the evictions that made room.
// The completion runs on an executor thread; it only hands the response to
// the connection (Responder), which encodes and writes it on its own network
// thread, then counts the answer with the code sent. Thread-safe (no state).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "http/http_message.h"
#include "http/router.h"
#include "repository/model_repository.h"
#include "scheduler/inference_request.h"
#include "serving/call.h"
#include "serving/inference_call.h"
#include "serving/services.h"

namespace inferd::http {

using ResponseEncoder = std::function<StatusOr<HttpResponse>(const scheduler::InferenceResponse&)>;

// The {version} path parameter, if any: a positive integer ("2"; "2.0" as TorchServe writes it).
StatusOr<std::optional<int64_t>> ParseVersionParam(const PathParams& params);

// The protocol-neutral view of `http`; its deadline is X-Request-Timeout-Ms
// (TorchServe's per-request timeout) when that header is valid.
serving::Call CallFor(const HttpRequest& http);

// Acquires the model of the {model}[/{version}] path (serving::AcquireModel)
// and calls `then` with it and the request (a copy that lives as long as the
// call), at once or after a load. On failure answers the error (counted) and
// does not call `then`.
void AcquireModel(const serving::Services& services, const PathParams& params,
                  const HttpRequest& http, const Responder& respond,
                  std::function<void(const HttpRequest&, serving::AcquiredModel)> then);

// Answers `status` as an error response and counts it against `model`.
void AnswerError(const serving::Services& services, const std::string& model, int64_t version,
                 const HttpRequest& http, const Responder& respond, const Status& status);

// Enqueues `request` on `model`; answers through `respond` exactly once.
void SubmitInference(const serving::Services& services, const serving::AcquiredModel& model,
                     scheduler::InferenceRequest request, const HttpRequest& http,
                     Responder respond, ResponseEncoder encode);

}  // namespace inferd::http
