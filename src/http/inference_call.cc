#include "http/inference_call.h"

#include <cstdint>
#include <cstdio>

#include "common/clock.h"
#include "http/status_map.h"
#include "serving/inference_call.h"

namespace inferd::http {
namespace {

std::string_view VersionText(const PathParams& params) {
  auto it = params.find("version");
  return it == params.end() ? std::string_view() : std::string_view(it->second);
}

void AddMillis(HttpResponse* r, const char* header, double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", ms);
  r->headers.emplace_back(header, text);
}

}  // namespace

StatusOr<std::optional<int64_t>> ParseVersionParam(const PathParams& params) {
  return serving::ParseModelVersion(VersionText(params));
}

serving::Call CallFor(const HttpRequest& http) {
  serving::Call call;
  call.protocol = serving::Protocol::kHttp;
  call.received = http.received;
  // A bad one is answered by the /predictions route.
  if (http.timeout_deadline && http.timeout_deadline->ok()) call.deadline = **http.timeout_deadline;
  call.is_cancelled = [flag = http.cancelled] { return flag->load(std::memory_order_relaxed); };
  return call;
}

void AnswerError(const serving::Services& services, const std::string& model, int64_t version,
                 const HttpRequest& http, const Responder& respond, const Status& status) {
  serving::CountAnswer(services, CallFor(http), model, version, status.code());
  Reply(respond, ErrorResponse(status));
}

void AcquireModel(const serving::Services& services, const PathParams& params, const HttpRequest& http,
                  const Responder& respond,
                  std::function<void(const HttpRequest&, serving::AcquiredModel)> then) {
  serving::AcquireModel(
      services, CallFor(http), params.at("model"), VersionText(params),
      [http, respond, then = std::move(then)](StatusOr<serving::AcquiredModel> model) {
        if (!model.ok()) {
          return Reply(respond, ErrorResponse(model.status()));  // counted by AcquireModel
        }
        then(http, std::move(*model));
      });
}

void SubmitInference(const serving::Services& services, const serving::AcquiredModel& acquired,
                     scheduler::InferenceRequest request, const HttpRequest& http,
                     Responder respond, ResponseEncoder encode) {
  serving::Call call = CallFor(http);
  const repository::ModelHandle& model = acquired.handle;
  const double cold_start_ms = acquired.cold_start_ms;
  const repository::Footprint load = model->footprint();  // its last load's times
  // The answer needs the model's name and version, not the model: the handle
  // is not held past the completion (the cache may then unload it).
  auto done = [name = model->name(), version = model->version(), respond,
               encode = std::move(encode), services, call,
               cold_start_ms, load](StatusOr<scheduler::InferenceResponse> result) {
    respond([name, version, encode, services, call, cold_start_ms, load,
             result = std::move(result)]() -> HttpResponse {
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
      if (cold_start_ms >= 0) {
        AddMillis(&r, "X-Inferd-Cold-Start-Ms", cold_start_ms);
        AddMillis(&r, "X-Inferd-Load-Ms", load.load_ms);
        AddMillis(&r, "X-Inferd-Load-Wait-Ms", load.load_wait_ms);
      }
      serving::CountAnswer(services, call, name, version, status.code(),
                           result.ok() ? &*result : nullptr);
      return r;
    });
  };
  serving::Submit(services, model, std::move(request), call, std::move(done));
}

}  // namespace inferd::http
