#include "http/v2_routes.h"

#include "common/json_writer.h"
#include "http/inference_call.h"
#include "http/model_metadata.h"
#include "http/status_map.h"
#include "http/v2_codec.h"

namespace inferd::http {
namespace {

void ModelMetadata(const serving::Services& services, const PathParams& params,
                   const Responder& respond) {
  auto version = ParseVersionParam(params);
  if (!version.ok()) return Reply(respond, ErrorResponse(version.status()));
  auto status = services.repository->GetStatus(params.at("model"));
  if (!status.ok()) return Reply(respond, ErrorResponse(status.status()));
  auto body = WriteV2ModelMetadata(*status, *version);
  if (!body.ok()) return Reply(respond, ErrorResponse(body.status()));
  Reply(respond, JsonResponse(200, std::move(*body)));
}

void ModelReady(const serving::Services& services, const PathParams& params,
                const Responder& respond) {
  auto version = ParseVersionParam(params);
  if (!version.ok()) return Reply(respond, ErrorResponse(version.status()));
  auto handle = services.repository->Get(params.at("model"), *version);
  if (!handle.ok()) return Reply(respond, ErrorResponse(handle.status()));
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String((*handle)->name());
  w.Key("version").String(std::to_string((*handle)->version()));
  w.Key("ready").Bool(true);
  w.EndObject();
  Reply(respond, JsonResponse(200, w.Take()));
}

void InferWith(const serving::Services& services, const HttpRequest& http, const Responder& respond,
               const serving::AcquiredModel& acquired) {
  const repository::ModelHandle& model = acquired.handle;
  auto parsed = ParseV2InferRequest(http.body, http.inference_header_length);
  if (!parsed.ok()) {
    return AnswerError(services, model->name(), model->version(), http, respond, parsed.status());
  }
  V2ResponseContext out = serving::MakeResponseContext(model->name(), model->version(), *parsed);
  auto request = serving::MakeInferenceRequest(model->config(), std::move(*parsed), http.received);
  if (!request.ok()) {
    return AnswerError(services, model->name(), model->version(), http, respond, request.status());
  }
  SubmitInference(services, acquired, std::move(*request), http, respond,
                  [out = std::move(out)](const scheduler::InferenceResponse& response) {
                    return WriteV2InferResponse(response, out);
                  });
}

// The body (and its `timeout`) is parsed once the model is there: a wait for a
// load is bounded by the model's request_timeout_ms.
void Infer(const serving::Services& services, const HttpRequest& http, const PathParams& params,
           Responder respond) {
  AcquireModel(services, params, http, respond,
               [services, respond](const HttpRequest& request, serving::AcquiredModel model) {
                 InferWith(services, request, respond, model);
               });
}

}  // namespace

void AddV2InferenceRoutes(Router& router, const serving::Services& services) {
  router.Add("GET", "/v2", [](const HttpRequest&, const PathParams&, Responder respond) {
    Reply(respond, JsonResponse(200, WriteV2ServerMetadata()));
  });
  router.Add("GET", "/v2/health/live",
             [](const HttpRequest&, const PathParams&, Responder respond) {
               Reply(respond, JsonResponse(200, R"({"live":true})"));
             });
  router.Add("GET", "/v2/health/ready",
             [services](const HttpRequest&, const PathParams&, Responder respond) {
               if (!services.ready || services.ready()) {
                 Reply(respond, JsonResponse(200, R"({"ready":true})"));
               } else {
                 Reply(respond, JsonResponse(503, R"({"ready":false,"error":"server is not ready: )"
                                                  R"(models still loading, or draining"})"));
               }
             });
  auto metadata = [services](const HttpRequest&, const PathParams& p, Responder r) {
    ModelMetadata(services, p, r);
  };
  auto ready = [services](const HttpRequest&, const PathParams& p, Responder r) {
    ModelReady(services, p, r);
  };
  auto infer = [services](const HttpRequest& h, const PathParams& p, Responder r) {
    Infer(services, h, p, std::move(r));
  };
  router.Add("GET", "/v2/models/{model}", metadata);
  router.Add("GET", "/v2/models/{model}/versions/{version}", metadata);
  router.Add("GET", "/v2/models/{model}/ready", ready);
  router.Add("GET", "/v2/models/{model}/versions/{version}/ready", ready);
  router.Add("POST", "/v2/models/{model}/infer", infer);
  router.Add("POST", "/v2/models/{model}/versions/{version}/infer", infer);
}

}  // namespace inferd::http
