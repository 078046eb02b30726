// What `inferd topology --calibrate` adds to each model of the report: the
// batch calibration that CalibrateStoreModel measured (store_calibration.h),
// as a topology::ModelAnnotation.
//
// JSON, under the model's "batch_calibration" key, with the keys and meaning
// of the server's `GET /v2/models/{m}` "batch_calibration" (http/):
//   {"version", "executor", "threads", "cores", "load_seconds",
//    "calibrated", "max_batch_size" (the largest batch the queue will form:
//    the largest chosen size, or the config's max_batch_size when not
//    calibrated), "seconds", "note" (calibrated) or "reason" (not),
//    "sizes": [{"batch_size", "latency_ms", "ms_per_item", "chosen"}],
//    "precision": the server's "precision" object (backend/precision_report.h),
//    null when the backend had no choice (precision fp32)}
// and for a model that failed (no version, a load that fails):
//   {"calibrated": false, "error": "model 'm': ..."}, the annotation's error.
// Text: one head line, then the server log's line per size (FormatCalibration),
// then the precision table (FormatPrecision) when the backend chose one.
//
// CalibrationAnnotation is a pure function; the annotator loads models (see
// store_calibration.h) and is thread-compatible.
#pragma once

#include <string>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "profile/store_calibration.h"
#include "scheduler/batch_calibration.h"
#include "topology/topology_command.h"

namespace inferd::profile {

topology::ModelAnnotation CalibrationAnnotation(const config::ModelConfig& config,
                                                const StatusOr<StoreCalibration>& result);

// Calibrates each model on the first executor the plan gives it (its
// executors have the same threads; the server calibrates on whichever of them
// is free first). The backend is borrowed and must outlive the annotator.
topology::ModelAnnotator BatchCalibrationAnnotator(backend::Backend& backend, std::string store_dir,
                                                   scheduler::CalibrationOptions options = {});

}  // namespace inferd::profile
