#include "http/inference_call.h"

#include "http/status_map.h"
#include "serving/inference_call.h"

namespace inferd::http {
namespace {

serving::Services ServicesOf(const RouteContext& ctx) {
  return {ctx.repository, ctx.request_metrics};
}

std::string_view VersionText(const PathParams& params) {
  auto it = params.find("version");
  return it == params.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace

StatusOr<std::optional<int64_t>> ParseVersionParam(const PathParams& params) {
  return serving::ParseModelVersion(VersionText(params));
}

serving::Call CallFor(const HttpRequest& http) {
  serving::Call call;
  call.protocol = serving::Protocol::kHttp;
  call.received = http.received;
  call.is_cancelled = [flag = http.cancelled] { return flag->load(std::memory_order_relaxed); };
  return call;
}

void AnswerError(const RouteContext& ctx, const std::string& model, int64_t version,
                 const HttpRequest& http, const Responder& respond, const Status& status) {
  serving::CountAnswer(ServicesOf(ctx), CallFor(http), model, version, status.code());
  Reply(respond, ErrorResponse(status));
}

repository::ModelHandle ResolveModel(const RouteContext& ctx, const PathParams& params,
                                     const HttpRequest& http, const Responder& respond) {
  auto handle = serving::ResolveModel(ServicesOf(ctx), CallFor(http), params.at("model"),
                                      VersionText(params));
  if (!handle.ok()) {
    Reply(respond, ErrorResponse(handle.status()));  // counted by ResolveModel
    return nullptr;
  }
  return *handle;
}

void SubmitInference(const RouteContext& ctx, repository::ModelHandle model,
                     scheduler::InferenceRequest request, const HttpRequest& http,
                     Responder respond, ResponseEncoder encode) {
  serving::Services services = ServicesOf(ctx);
  serving::Call call = CallFor(http);
  auto done = [model, respond, encode = std::move(encode), services,
               call](StatusOr<scheduler::InferenceResponse> result) {
    respond([model, encode, services, call, result = std::move(result)]() -> HttpResponse {
      Status status = result.status();
      HttpResponse r;
      if (result.ok()) {
        auto encoded = encode(*result);
        if (encoded.ok()) {
          r = std::move(*encoded);
        } else {
          status = encoded.status();
        }
      }
      if (!status.ok()) r = ErrorResponse(status);
      serving::CountAnswer(services, call, model->name(), model->version(), status.code(),
                           result.ok() ? &*result : nullptr);
      return r;
    });
  };
  serving::Submit(model, std::move(request), call, std::move(done));
}

}  // namespace inferd::http
