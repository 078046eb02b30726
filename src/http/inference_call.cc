#include "http/inference_call.h"

#include <charconv>

#include "http/status_map.h"

namespace inferd::http {

StatusOr<std::optional<int64_t>> ParseVersionParam(const PathParams& params) {
  auto it = params.find("version");
  if (it == params.end()) return std::optional<int64_t>();
  std::string_view text = it->second;
  if (text.size() > 2 && text.substr(text.size() - 2) == ".0") text.remove_suffix(2);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0) {
    return InvalidArgument("model version must be a positive integer, got '" + it->second + "'");
  }
  return std::optional<int64_t>(v);
}

void AnswerError(const RouteContext& ctx, const std::string& model, int64_t version,
                 const HttpRequest& http, const Responder& respond, const Status& status) {
  HttpResponse r = ErrorResponse(status);
  if (ctx.request_metrics)
    ctx.request_metrics->Record(model, version, r.status, http.received, nullptr);
  Reply(respond, std::move(r));
}

repository::ModelHandle ResolveModel(const RouteContext& ctx, const PathParams& params,
                                     const HttpRequest& http, const Responder& respond) {
  const std::string& name = params.at("model");
  auto version = ParseVersionParam(params);
  if (!version.ok()) {
    AnswerError(ctx, "", 0, http, respond, version.status());
    return nullptr;
  }
  auto handle = ctx.repository->Get(name, *version);
  if (!handle.ok()) {
    // Unknown names are counted under model="" (see RequestMetrics).
    bool known =
        handle.status().code() != StatusCode::kNotFound || ctx.repository->GetStatus(name).ok();
    // No version label either: a version that failed to resolve is the client's word.
    AnswerError(ctx, known ? name : "", 0, http, respond, handle.status());
    return nullptr;
  }
  return *handle;
}

void SubmitInference(const RouteContext& ctx, repository::ModelHandle model,
                     scheduler::InferenceRequest request, const HttpRequest& http,
                     Responder respond, ResponseEncoder encode) {
  request.is_cancelled = [flag = http.cancelled] { return flag->load(std::memory_order_relaxed); };
  TimePoint received = http.received;
  RequestMetrics* metrics = ctx.request_metrics;
  auto done = [model, respond, encode = std::move(encode), received,
               metrics](StatusOr<scheduler::InferenceResponse> result) {
    respond([model, encode, received, metrics, result = std::move(result)]() -> HttpResponse {
      HttpResponse r;
      if (result.ok()) {
        auto encoded = encode(*result);
        r = encoded.ok() ? std::move(*encoded) : ErrorResponse(encoded.status());
      } else {
        r = ErrorResponse(result.status());
      }
      if (metrics) {
        metrics->Record(model->name(), model->version(), r.status, received,
                        result.ok() ? &*result : nullptr);
      }
      return r;
    });
  };
  Status st = model->Enqueue(std::move(request), std::move(done));
  if (!st.ok()) AnswerError(ctx, model->name(), model->version(), http, respond, st);
}

}  // namespace inferd::http
