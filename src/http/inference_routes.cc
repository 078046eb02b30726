#include "http/inference_routes.h"

#include "http/inference_call.h"
#include "http/json_body.h"
#include "common/json_writer.h"
#include "http/status_map.h"
#include "http/torchserve_codec.h"

namespace inferd::http {
namespace {

void Ping(const serving::Services& services, Responder respond) {
  if (!services.ready || services.ready()) {
    Reply(respond, JsonResponse(200, R"({"status":"Healthy"})"));
  } else {
    Reply(respond, JsonResponse(503, R"({"status":"Unhealthy","error":"server is not ready"})"));
  }
}

void PredictWith(const serving::Services& services, const HttpRequest& http, const Responder& respond,
                 const serving::AcquiredModel& acquired) {
  const repository::ModelHandle& model = acquired.handle;
  const config::ModelConfig& config = model->config();
  scheduler::InferenceRequest request;
  // X-Request-Timeout-Ms: a per-request deadline, like v2's `timeout`
  // parameter; replaces the model's request_timeout_ms.
  if (const auto& deadline = http.timeout_deadline) {
    if (!deadline->ok()) {
      return AnswerError(services, model->name(), model->version(), http, respond,
                         deadline->status());
    }
    request.deadline = **deadline;
  }
  bool single_item = true;
  if (config.preprocess.kind != config::PreprocessKind::kNone) {
    // The body goes through untouched: the pipeline unwraps multipart and
    // base64 JSON on the executor, inside the core budget (pipeline/payload.h).
    request.raw.push_back({http.content_type, *http.body});
  } else {
    auto parsed = ParsePredictionJson(*http.body, config);
    if (!parsed.ok()) {
      AnswerError(services, model->name(), model->version(), http, respond, parsed.status());
      return;
    }
    request.inputs = std::move(parsed->inputs);
    single_item = parsed->added_batch_dim;
  }
  const bool handler_answer = config.preprocess.kind == config::PreprocessKind::kBytes;
  SubmitInference(
      services, acquired, std::move(request), http, respond,
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
void Predict(const serving::Services& services, const HttpRequest& http, const PathParams& params,
             Responder respond) {
  AcquireModel(services, params, http, respond,
               [services, respond](const HttpRequest& request, serving::AcquiredModel model) {
                 PredictWith(services, request, respond, model);
               });
}

}  // namespace

void AddTorchServeInferenceRoutes(Router& router, const serving::Services& services) {
  router.Add("GET", "/ping", [services](const HttpRequest&, const PathParams&, Responder respond) {
    Ping(services, std::move(respond));
  });
  auto predict = [services](const HttpRequest& http, const PathParams& params, Responder respond) {
    Predict(services, http, params, std::move(respond));
  };
  // PUT too: `curl -T image.jpg URL` uploads with PUT, and TorchServe accepts it.
  for (const char* method : {"POST", "PUT"}) {
    router.Add(method, "/predictions/{model}", predict);
    router.Add(method, "/predictions/{model}/{version}", predict);
  }
}

}  // namespace inferd::http
