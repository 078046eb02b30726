// The HTTP side of the request path that every protocol shares
// (serving/inference_call.h): takes the model and version from the path,
// answers errors as JSON, and encodes the answer on the connection's thread.
//
// The completion runs on an executor thread; it only hands the response to
// the connection (Responder), which encodes and writes it on its own network
// thread, then counts the answer with the code sent. The ModelHandle rides
// along so the version stays loaded until the answer is written. Thread-safe
// (no state).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "http/http_message.h"
#include "http/route_context.h"
#include "http/router.h"
#include "repository/model_repository.h"
#include "scheduler/inference_request.h"
#include "serving/call.h"

namespace inferd::http {

using ResponseEncoder = std::function<StatusOr<HttpResponse>(const scheduler::InferenceResponse&)>;

// The {version} path parameter, if any: a positive integer ("2"; "2.0" as TorchServe writes it).
StatusOr<std::optional<int64_t>> ParseVersionParam(const PathParams& params);

// The protocol-neutral view of `http`.
serving::Call CallFor(const HttpRequest& http);

// Looks the model up; on failure answers the error (and counts it) and returns null.
repository::ModelHandle ResolveModel(const RouteContext& ctx, const PathParams& params,
                                     const HttpRequest& http, const Responder& respond);

// Answers `status` as an error response and counts it against `model`.
void AnswerError(const RouteContext& ctx, const std::string& model, int64_t version,
                 const HttpRequest& http, const Responder& respond, const Status& status);

// Enqueues `request` on `model`; answers through `respond` exactly once.
void SubmitInference(const RouteContext& ctx, repository::ModelHandle model,
                     scheduler::InferenceRequest request, const HttpRequest& http,
                     Responder respond, ResponseEncoder encode);

}  // namespace inferd::http
