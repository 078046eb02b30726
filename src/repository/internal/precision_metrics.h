// The precision a model version was loaded in (backend/precision_report.h),
// as /metrics series, set once per load of the version:
//   inferd_model_precision_served{model, version, precision}  1 for the
//       precision served, 0 for each other candidate measured (a state set:
//       the same label sets at every load, so a reload that chooses another
//       precision leaves no stale 1 behind)
//   inferd_model_precision_candidate_kept{model, version, precision}  1 when
//       the candidate passed the accuracy guard, 0 refused or not built
//   inferd_model_precision_candidate_ms_per_item{model, version, precision}
//       time per item on the samples (timed candidates only)
//   inferd_model_precision_candidate_max_relative_error{model, version, precision}
//       error against fp32 relative to the largest fp32 output (built ones only)
// Nothing for a report with an empty `requested` (precision fp32). Labelled
// with the model, so RemoveModelSeries drops them when the model leaves memory.
// Thread-safety: the registry's; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "backend/precision_report.h"
#include "metrics/registry.h"

namespace inferd::repository::internal {

void ExportPrecision(metrics::Registry& registry, const std::string& model, int64_t version,
                     const backend::PrecisionReport& report);

}  // namespace inferd::repository::internal
