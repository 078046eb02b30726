#include "serving/inference_call.h"

#include <algorithm>
#include <chrono>

namespace inferd::serving {

StatusOr<repository::ModelHandle> ResolveModel(const Services& services, const Call& call,
                                               const std::string& model, std::string_view version) {
  auto parsed = ParseModelVersion(version);
  if (!parsed.ok()) {
    CountAnswer(services, call, "", 0, parsed.status().code());
    return parsed.status();
  }
  auto handle = services.repository->Get(model, *parsed);
  if (!handle.ok()) {
    // Unknown names are counted under model="" (see RequestMetrics), and
    // without a version: a version that failed to resolve is the client's word.
    bool known = handle.status().code() != StatusCode::kNotFound ||
                 services.repository->GetStatus(model).ok();
    CountAnswer(services, call, known ? model : "", 0, handle.status().code());
    return handle.status();
  }
  return *handle;
}

void CountAnswer(const Services& services, const Call& call, const std::string& model,
                 int64_t version, StatusCode code, const scheduler::InferenceResponse* response) {
  if (services.metrics) services.metrics->Record(call, model, version, code, response);
}

void Submit(const repository::ModelHandle& model, scheduler::InferenceRequest request,
            const Call& call, scheduler::Completion done) {
  request.is_cancelled = call.is_cancelled;
  if (call.deadline != TimePoint::max()) {
    // The request's own deadline (a v2 timeout), else the model's
    // request_timeout_ms, whichever the transport's deadline cuts shorter.
    TimePoint own = request.deadline;
    if (own == TimePoint::max()) {
      own = Clock::Real()->Now() + std::chrono::milliseconds(model->config().request_timeout_ms);
    }
    request.deadline = std::min(own, call.deadline);
  }
  Status st = model->Enqueue(
      std::move(request),
      [model, done](StatusOr<scheduler::InferenceResponse> result) { done(std::move(result)); });
  if (!st.ok()) done(std::move(st));
}

}  // namespace inferd::serving
