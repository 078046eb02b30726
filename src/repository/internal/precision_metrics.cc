#include "repository/internal/precision_metrics.h"

namespace inferd::repository::internal {

void ExportPrecision(metrics::Registry& registry, const std::string& model, int64_t version,
                     const backend::PrecisionReport& report) {
  if (report.requested.empty()) return;
  for (const backend::PrecisionTrial& t : report.candidates) {
    const metrics::Labels labels = {{"model", model},
                                    {"version", std::to_string(version)},
                                    {"runtime", t.runtime},
                                    {"precision", t.precision}};
    const std::string verdict = backend::VerdictClass(t, report);
    registry
        .GetGauge("inferd_model_precision_served",
                  "1 for the precision a model version is served in, 0 for each other "
                  "candidate measured at load",
                  labels)
        .Set(backend::IsChosen(t, report) ? 1 : 0);
    registry
        .GetGauge("inferd_model_precision_candidate_kept",
                  "1 when the precision passed the accuracy guard at load, 0 when it was "
                  "refused or not built",
                  labels)
        .Set(verdict == "refused" || verdict == "not_built" ? 0 : 1);
    if (t.ms_per_item > 0) {
      registry
          .GetGauge("inferd_model_precision_candidate_ms_per_item",
                    "time per item of the precision on the sample inputs at load", labels)
          .Set(t.ms_per_item);
      registry
          .GetGauge("inferd_model_precision_candidate_ms_alone",
                    "time of one item by itself on the sample inputs at load", labels)
          .Set(t.ms_alone);
      registry
          .GetGauge("inferd_model_precision_candidate_ms_served",
                    "what precision auto compares: the mean time per item over the served batch "
                    "sizes (one item alone and the served batch)",
                    labels)
          .Set(t.ms_served);
    }
    if (t.built) {
      registry
          .GetGauge("inferd_model_precision_candidate_max_relative_error",
                    "largest error against fp32 on the sample inputs at load, relative to the "
                    "largest fp32 output",
                    labels)
          .Set(t.max_relative_error);
    }
  }
}

}  // namespace inferd::repository::internal
