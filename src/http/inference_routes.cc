#include "http/inference_routes.h"

#include <charconv>
#include <cstdint>

#include "http/inference_call.h"
#include "http/json_body.h"
#include "common/json_writer.h"
#include "http/status_map.h"
#include "http/torchserve_codec.h"

namespace inferd::http {
namespace {

void Ping(const RouteContext& ctx, Responder respond) {
  if (!ctx.ready || ctx.ready()) {
    Reply(respond, JsonResponse(200, R"({"status":"Healthy"})"));
  } else {
    Reply(respond, JsonResponse(503, R"({"status":"Unhealthy","error":"server is not ready"})"));
  }
}

// The X-Request-Timeout-Ms header: a per-request deadline, like v2's
// `timeout` parameter; replaces the model's request_timeout_ms.
StatusOr<std::optional<TimePoint>> RequestDeadline(const HttpRequest& http) {
  if (!http.request_timeout_ms) return std::optional<TimePoint>();
  int64_t ms = 0;
  const std::string& text = *http.request_timeout_ms;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms <= 0) {
    return InvalidArgument(
        "header X-Request-Timeout-Ms: expected a positive integer "
        "(milliseconds), got '" +
        text + "'");
  }
  return std::optional<TimePoint>(DeadlineAfter(
      http.received, ms > INT64_MAX / 1000 ? std::chrono::microseconds::max()
                                            : std::chrono::microseconds(ms * 1000)));
}

void PredictWith(const RouteContext& ctx, const HttpRequest& http, const Responder& respond,
                 const serving::AcquiredModel& acquired) {
  const repository::ModelHandle& model = acquired.handle;
  const config::ModelConfig& config = model->config();
  scheduler::InferenceRequest request;
  auto deadline = RequestDeadline(http);
  if (!deadline.ok()) {
    return AnswerError(ctx, model->name(), model->version(), http, respond, deadline.status());
  }
  if (*deadline) request.deadline = **deadline;
  bool single_item = true;
  if (config.preprocess.kind != config::PreprocessKind::kNone) {
    // The body goes through untouched: the pipeline unwraps multipart and
    // base64 JSON on the executor, inside the core budget (pipeline/payload.h).
    request.raw.push_back({http.content_type, *http.body});
  } else {
    auto parsed = ParsePredictionJson(*http.body, config);
    if (!parsed.ok()) {
      AnswerError(ctx, model->name(), model->version(), http, respond, parsed.status());
      return;
    }
    request.inputs = std::move(parsed->inputs);
    single_item = parsed->added_batch_dim;
  }
  const bool handler_answer = config.preprocess.kind == config::PreprocessKind::kBytes;
  SubmitInference(
      ctx, acquired, std::move(request), http, respond,
      [single_item, handler_answer](
          const scheduler::InferenceResponse& response) -> StatusOr<HttpResponse> {
        // A handler's answer goes out as it wrote it (TorchServe's way).
        if (handler_answer) return HandlerAnswerResponse(response);
        ASSIGN_OR_RETURN(std::string body, WritePredictionResponse(response, single_item));
        return JsonResponse(200, std::move(body));
      });
}

// A bad X-Request-Timeout-Ms is answered once the model is known (it is
// counted against it); a valid one bounds the wait for a load.
void Predict(const RouteContext& ctx, const HttpRequest& http, const PathParams& params,
             Responder respond) {
  AcquireModel(ctx, params, http, respond,
               [ctx, respond](const HttpRequest& request, serving::AcquiredModel model) {
                 PredictWith(ctx, request, respond, model);
               });
}

}  // namespace

void AddTorchServeInferenceRoutes(Router& router, const RouteContext& ctx) {
  router.Add("GET", "/ping", [ctx](const HttpRequest&, const PathParams&, Responder respond) {
    Ping(ctx, std::move(respond));
  });
  auto predict = [ctx](const HttpRequest& http, const PathParams& params, Responder respond) {
    Predict(ctx, http, params, std::move(respond));
  };
  // PUT too: `curl -T image.jpg URL` uploads with PUT, and TorchServe accepts it.
  for (const char* method : {"POST", "PUT"}) {
    router.Add(method, "/predictions/{model}", predict);
    router.Add(method, "/predictions/{model}/{version}", predict);
  }
}

}  // namespace inferd::http
