#include "serving/inference_call.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>

namespace inferd::serving {

void AcquireModel(const Services& services, const Call& call, const std::string& model,
                  std::string_view version, std::function<void(StatusOr<AcquiredModel>)> then) {
  auto parsed = ParseModelVersion(version);
  if (!parsed.ok()) {
    CountAnswer(services, call, "", 0, parsed.status().code());
    return then(parsed.status());
  }
  // Answered inline (ready, or refused) unless this is still false when the
  // answer comes: then the request waited for a load.
  auto returned = std::make_shared<std::atomic<bool>>(false);
  const auto start = std::chrono::steady_clock::now();
  services.repository->Acquire(
      model, *parsed, call.deadline,
      [services, call, model, returned, start,
       then = std::move(then)](StatusOr<repository::ModelHandle> handle) {
        if (!handle.ok()) {
          // Unknown names are counted under model="" (see RequestMetrics), and
          // without a version: a version that failed to resolve is the client's word.
          const bool known = handle.status().code() != StatusCode::kNotFound ||
                             services.repository->GetStatus(model).ok();
          CountAnswer(services, call, known ? model : "", 0, handle.status().code());
          return then(handle.status());
        }
        AcquiredModel acquired{std::move(*handle), -1};
        if (returned->load()) {
          acquired.cold_start_ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
        }
        then(std::move(acquired));
      });
  returned->store(true);
}

StatusOr<repository::ModelHandle> ResolveModel(const Services& services, const Call& call,
                                               const std::string& model, std::string_view version) {
  std::promise<StatusOr<repository::ModelHandle>> result;
  AcquireModel(services, call, model, version, [&result](StatusOr<AcquiredModel> acquired) {
    result.set_value(acquired.ok() ? StatusOr<repository::ModelHandle>(acquired->handle)
                                   : StatusOr<repository::ModelHandle>(acquired.status()));
  });
  return result.get_future().get();
}

void CountAnswer(const Services& services, const Call& call, const std::string& model,
                 int64_t version, StatusCode code, const scheduler::InferenceResponse* response) {
  if (services.request_metrics)
    services.request_metrics->Record(call, model, version, code, response);
}

void Submit(const Services& services, const repository::ModelHandle& model,
            scheduler::InferenceRequest request, const Call& call, scheduler::Completion done) {
  if (services.tap) done = services.tap->Tap(model, request, std::move(done));
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
  // The queued request holds the version until its completion is destroyed
  // (ServedModel::Enqueue); not holding it longer lets the model cache see it
  // idle as soon as its last request is done.
  Status st = model->Enqueue(std::move(request), done);
  if (!st.ok()) done(std::move(st));
}

}  // namespace inferd::serving
