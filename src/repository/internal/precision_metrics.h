// The precision (and runtime) a model version was loaded in
// (backend/precision_report.h), as /metrics series, set once per load of the
// version; every series is labelled {model, version, runtime, precision}
// (runtime: torchscript | onnxruntime):
//   inferd_model_precision_served  1 for the candidate served, 0 for each
//       other candidate measured (a state set: the same label sets at every
//       load, so a reload that chooses another one leaves no stale 1 behind)
//   inferd_model_precision_candidate_kept  1 when the candidate passed the
//       accuracy guard, 0 refused or not built (with _served: the verdict)
//   inferd_model_precision_candidate_ms_per_item  time per item in a batch on
//       the samples (timed candidates only)
//   inferd_model_precision_candidate_ms_alone  one item by itself (the same)
//   inferd_model_precision_candidate_ms_served  what auto compares: the mean
//       over the served batch sizes (backend/runtime_choice.h; the same)
//   inferd_model_precision_candidate_max_relative_error  error against torch
//       fp32 relative to the largest fp32 output (built ones only)
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
