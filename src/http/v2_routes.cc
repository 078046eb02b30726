#include "http/v2_routes.h"

#include <set>

#include "http/inference_call.h"
#include "common/json_writer.h"
#include "http/model_metadata.h"
#include "http/status_map.h"
#include "http/tensor_json.h"
#include "http/v2_codec.h"

namespace inferd::http {
namespace {

void ModelMetadata(const RouteContext& ctx, const PathParams& params, const Responder& respond) {
  auto version = ParseVersionParam(params);
  if (!version.ok()) return Reply(respond, ErrorResponse(version.status()));
  auto status = ctx.repository->GetStatus(params.at("model"));
  if (!status.ok()) return Reply(respond, ErrorResponse(status.status()));
  auto body = WriteV2ModelMetadata(*status, *version);
  if (!body.ok()) return Reply(respond, ErrorResponse(body.status()));
  Reply(respond, JsonResponse(200, std::move(*body)));
}

void ModelReady(const RouteContext& ctx, const PathParams& params, const Responder& respond) {
  auto version = ParseVersionParam(params);
  if (!version.ok()) return Reply(respond, ErrorResponse(version.status()));
  auto handle = ctx.repository->Get(params.at("model"), *version);
  if (!handle.ok()) return Reply(respond, ErrorResponse(handle.status()));
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String((*handle)->name());
  w.Key("version").String(std::to_string((*handle)->version()));
  w.Key("ready").Bool(true);
  w.EndObject();
  Reply(respond, JsonResponse(200, w.Take()));
}

// Checks requested output names against the config before any compute is spent.
Status CheckRequestedOutputs(const config::ModelConfig& config,
                             const std::vector<V2RequestedOutput>& outputs) {
  if (config.outputs.empty() || outputs.empty()) return Status::Ok();
  std::set<std::string> known;
  std::string names;
  for (const auto& spec : config.outputs) known.insert(spec.name);
  if (!config.postprocess.kind.empty()) known.insert({"labels", "scores"});
  for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
  for (const auto& out : outputs) {
    if (!known.count(out.name)) {
      return InvalidArgument("unknown output '" + out.name + "'; model '" + config.name +
                             "' has outputs: " + names);
    }
  }
  return Status::Ok();
}

Status TakeRawInputs(const config::ModelConfig& config, const std::vector<NamedTensor>& inputs,
                     scheduler::InferenceRequest& request) {
  if (inputs.size() != 1 || inputs[0].tensor.dtype() != DataType::kBytes) {
    return InvalidArgument("model '" + config.name + "' preprocesses raw data (" +
                           config.preprocess.kind +
                           "): send one BYTES input whose elements are the raw payloads");
  }
  const Tensor& t = inputs[0].tensor;
  ASSIGN_OR_RETURN(auto elements, SplitBytesElements(t.data(), t.byte_size(), t.num_elements(),
                                                     "input '" + inputs[0].name + "'"));
  for (std::string_view e : elements) request.raw.push_back({"", std::string(e)});
  return Status::Ok();
}

void Infer(const RouteContext& ctx, const HttpRequest& http, const PathParams& params,
           Responder respond) {
  repository::ModelHandle model = ResolveModel(ctx, params, http, respond);
  if (!model) return;
  const config::ModelConfig& config = model->config();
  auto parsed = ParseV2InferRequest(http.body, http.inference_header_length);
  Status st = parsed.ok() ? CheckRequestedOutputs(config, parsed->outputs) : parsed.status();
  scheduler::InferenceRequest request;
  if (st.ok() && !config.preprocess.kind.empty()) {
    st = TakeRawInputs(config, parsed->inputs, request);
  } else if (st.ok()) {
    request.inputs = std::move(parsed->inputs);
  }
  if (!st.ok()) return AnswerError(ctx, model->name(), model->version(), http, respond, st);
  request.id = parsed->id;
  request.priority = parsed->priority;
  if (parsed->timeout_us > 0) {
    request.deadline = http.received + std::chrono::microseconds(parsed->timeout_us);
  }
  V2ResponseContext out{model->name(), model->version(), parsed->id, std::move(parsed->outputs),
                        parsed->binary_data_output};
  SubmitInference(ctx, model, std::move(request), http, std::move(respond),
                  [out = std::move(out)](const scheduler::InferenceResponse& response) {
                    return WriteV2InferResponse(response, out);
                  });
}

}  // namespace

void AddV2InferenceRoutes(Router& router, const RouteContext& ctx) {
  router.Add("GET", "/v2", [](const HttpRequest&, const PathParams&, Responder respond) {
    Reply(respond, JsonResponse(200, WriteV2ServerMetadata()));
  });
  router.Add("GET", "/v2/health/live",
             [](const HttpRequest&, const PathParams&, Responder respond) {
               Reply(respond, JsonResponse(200, R"({"live":true})"));
             });
  router.Add("GET", "/v2/health/ready",
             [ctx](const HttpRequest&, const PathParams&, Responder respond) {
               if (!ctx.ready || ctx.ready()) {
                 Reply(respond, JsonResponse(200, R"({"ready":true})"));
               } else {
                 Reply(respond, JsonResponse(503, R"({"ready":false,"error":"server is not ready: )"
                                                  R"(models still loading, or draining"})"));
               }
             });
  auto metadata = [ctx](const HttpRequest&, const PathParams& p, Responder r) {
    ModelMetadata(ctx, p, r);
  };
  auto ready = [ctx](const HttpRequest&, const PathParams& p, Responder r) {
    ModelReady(ctx, p, r);
  };
  auto infer = [ctx](const HttpRequest& h, const PathParams& p, Responder r) {
    Infer(ctx, h, p, std::move(r));
  };
  router.Add("GET", "/v2/models/{model}", metadata);
  router.Add("GET", "/v2/models/{model}/versions/{version}", metadata);
  router.Add("GET", "/v2/models/{model}/ready", ready);
  router.Add("GET", "/v2/models/{model}/versions/{version}/ready", ready);
  router.Add("POST", "/v2/models/{model}/infer", infer);
  router.Add("POST", "/v2/models/{model}/versions/{version}/infer", infer);
}

}  // namespace inferd::http
