// Calibrates the batch sizes of one model of a model store exactly as the
// server does when it loads the model (`inferd topology --calibrate`).
//
// The model's default version (the highest, as the repository serves it:
// repository::ModelStore) is loaded through the Backend on a load thread with
// one unpinned intra-op thread (Backend::InitExecutorThread({}, 1), as the
// repository's load threads), so the backend's load-time warm-up and variant
// trials run as in the server. Then a fresh thread set up as the model's
// executor (InitExecutorThread(cores, threads) with the executor the core
// plan gives it) runs scheduler::BatchCalibrator::Calibrate, the scheduler's
// own code: two warm-up calls per size, the ladder 1, 2, 4, ... max_batch_size
// within CalibrationBudget, timed rounds keeping each size's fastest call,
// ChooseBatchSizes; the clock the scheduler picks for that executor
// (ExecutorTimer: thread CPU time for one thread, else wall time).
//
// The precision the backend chose at load, with every candidate it measured,
// comes back with the calibration (the server shows the same in
// `GET /v2/models/{m}`).
//
// What differs from a server by design: one model at a time, nothing else
// loading or serving meanwhile, and its memory freed before the next model.
//
// Thread-compatible: call from one thread at a time. The backend is borrowed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "scheduler/batch_calibration.h"

namespace inferd::profile {

// The executor the model calibrates on, as the core plan gives it.
struct CalibrationExecutor {
  int id = -1;
  std::vector<int> cores;  // cpus the intra-op pool is pinned to (empty: unpinned)
  int threads = 1;         // intra-op threads
};

struct StoreCalibration {
  int64_t version = 0;  // the version loaded
  CalibrationExecutor executor;
  double load_seconds = 0;                  // Backend::Load, wall time
  backend::PrecisionReport precision;       // chosen at load (empty `requested`: no choice)
  scheduler::BatchCalibration calibration;  // uncalibrated, with the reason, when the model
                                            // cannot be measured (max_batch_size 1, ...)
};

// Errors (no version with a model file, a load that fails) are
// kInvalidArgument and name the model.
StatusOr<StoreCalibration> CalibrateStoreModel(backend::Backend& backend,
                                               const std::string& store_dir,
                                               const config::ModelConfig& config,
                                               const CalibrationExecutor& executor,
                                               const scheduler::CalibrationOptions& options = {});

}  // namespace inferd::profile
