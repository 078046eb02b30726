// How a model's batch calibration is told: the log lines at load and the
// gauges on /metrics (inferd_batch_size_limit, inferd_batch_calibration_seconds).
//
// Free functions, called by the scheduler once per calibration (at load, or
// when a deferred one ends); thread-safe as the registry is.
#pragma once

#include <string>

#include "metrics/registry.h"
#include "scheduler/batch_calibration.h"

namespace inferd::scheduler {

// Logs the table, or why there is none. `origin` says where a calibration not
// measured now came from ("measured at an earlier load of this file"), or is
// empty.
void LogCalibration(const std::string& model, const BatchCalibration& result,
                    const std::string& origin);

// Sets the model version's gauges: the largest batch its queue forms (the
// calibrated limit, or `max_batch_size` when not calibrated) and each measured
// size's latency.
void ExportCalibration(metrics::Registry& registry, const metrics::Labels& model,
                       int max_batch_size, const BatchCalibration& result);

// Logs and sets the model version's activation memory gauges
// (inferd_activation_bytes_per_item, _per_token); nothing when unmeasured.
void ReportActivation(metrics::Registry* registry, const std::string& name,
                      const metrics::Labels& model, const ActivationMemory& activation);

}  // namespace inferd::scheduler
