#include "serving/request_metrics.h"

namespace inferd::serving {

void RequestMetrics::Record(const Call& call, const std::string& model, int64_t version,
                            StatusCode code, const scheduler::InferenceResponse* response) {
  if (!registry_) return;
  metrics::Labels counter_labels = {{"model", model},
                                    {"protocol", std::string(ProtocolName(call.protocol))},
                                    {"code", std::string(StatusCodeName(code))}};
  if (version > 0) counter_labels["version"] = std::to_string(version);
  // Share*, not Get*: the repository may remove the model's series at any
  // moment (its last version unloaded); the shared_ptr keeps each one alive
  // while it is updated here.
  registry_
      ->ShareCounter("inferd_requests_total",
                     "inference requests by model, version, protocol and status code",
                     counter_labels)
      ->Increment();
  if (model.empty()) return;
  const metrics::Labels labels = {{"model", model}};
  double total = std::chrono::duration<double>(Clock::Real()->Now() - call.received).count();
  registry_
      ->ShareHistogram("inferd_request_duration_seconds",
                       "time from the request read to its response built", labels,
                       metrics::LatencyBuckets())
      ->Observe(total);
  if (!response) return;
  registry_
      ->ShareHistogram("inferd_queue_duration_seconds", "time queued before compute", labels,
                       metrics::LatencyBuckets())
      ->Observe(static_cast<double>(response->queue_us) * 1e-6);
  registry_
      ->ShareHistogram("inferd_preprocess_duration_seconds",
                       "this request's pre-processing (decode, resize, tokenize) on the executor",
                       labels, metrics::LatencyBuckets())
      ->Observe(static_cast<double>(response->preprocess_us) * 1e-6);
  registry_
      ->ShareHistogram("inferd_compute_duration_seconds",
                       "the model's forward for the batch this request ran in", labels,
                       metrics::LatencyBuckets())
      ->Observe(static_cast<double>(response->compute_us) * 1e-6);
}

}  // namespace inferd::serving
