// LoadMemory: what earlier loads of one model file found, kept across evictions (the
// repository drops it when the file changes), so that a reload does not
// measure again: the execution variant the backend chose (the reload still
// verifies it, but tries no other) and the batch calibration the scheduler
// measured. Profiled: re-choosing the variant and calibrating were about half
// of the load's CPU for the generated MLPs and convnets.
// Thread-safety: fields under `mu` (the served version writes the
// calibration when it retires, on whichever thread retires it).
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "scheduler/batch_calibration.h"

namespace inferd::repository::internal {

struct LoadMemory {
  std::mutex mu;
  std::string variant;                                    // empty: none known
  std::optional<scheduler::BatchCalibration> calibration;  // a calibrated one only
};

}  // namespace inferd::repository::internal
