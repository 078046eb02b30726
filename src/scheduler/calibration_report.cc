#include "scheduler/calibration_report.h"

#include <spdlog/spdlog.h>

namespace inferd::scheduler {

void LogCalibration(const std::string& model, const BatchCalibration& result,
                    const std::string& origin) {
  if (!result.calibrated) {
    spdlog::info("model '{}': batch sizes not calibrated: {}", model, result.note);
    return;
  }
  spdlog::info("model '{}': batch sizes calibrated in {:.2f} s ({}{}): up to {}", model,
               result.seconds, result.note, origin.empty() ? "" : "; " + origin,
               result.max_batch);
  for (const std::string& line : FormatCalibration(result)) {
    spdlog::info("model '{}':   {}", model, line);
  }
  if (result.activation.measured()) {
    spdlog::info("model '{}': activation memory {}", model, result.activation.ToString());
  }
}

void ExportCalibration(metrics::Registry& registry, const metrics::Labels& model,
                       int max_batch_size, const BatchCalibration& result) {
  registry
      .GetGauge("inferd_batch_size_limit",
                "largest batch the model's queue forms (calibrated, or max_batch_size)", model)
      .Set(result.calibrated ? result.max_batch : max_batch_size);
  for (const auto& size : result.sizes) {
    metrics::Labels labels = model;
    labels["batch_size"] = std::to_string(size.batch);
    labels["chosen"] = size.chosen ? "true" : "false";
    registry
        .GetGauge("inferd_batch_calibration_seconds",
                  "measured time of one batch of this size at load", labels)
        .Set(size.latency_ms / 1e3);
  }
  ReportActivation(&registry, "", model, result.activation);
}

void ReportActivation(metrics::Registry* registry, const std::string& name,
                      const metrics::Labels& model, const ActivationMemory& activation) {
  if (!activation.measured()) return;
  if (!name.empty()) {
    spdlog::info("model '{}': activation memory {}", name, activation.ToString());
  }
  if (!registry) return;
  registry
      ->GetGauge("inferd_activation_bytes_per_item",
                 "activation memory of one item: the peak resident memory one forward added, "
                 "per item (memory admission)",
                 model)
      .Set(static_cast<double>(activation.bytes_per_item));
  if (activation.bytes_per_token > 0) {
    registry
        ->GetGauge("inferd_activation_bytes_per_token",
                   "activation memory per padded token, at the longest length measured",
                   model)
        .Set(static_cast<double>(activation.bytes_per_token));
  }
}

}  // namespace inferd::scheduler
