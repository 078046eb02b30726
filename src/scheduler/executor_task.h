// ExecutorTask: work for one executor outside of batches, run before batches
// (the Scheduler's task queue); today a model's batch-size calibration.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "scheduler/batch_calibration.h"
#include "scheduler/model_spec.h"

namespace inferd::scheduler {

class ModelQueue;

struct ExecutorTask {
  std::vector<int> executors;             // that may run it; empty = any
  std::function<void(int executor)> run;  // on the executor, unlocked; must not throw
  std::function<void()> cancel;           // instead of run, when stopping
};

// A task that measures `q`'s batch sizes on an executor that may run it
// (`executors` gives each one's thread count, for its clock) and hands the
// result to `done` there, or an uncalibrated result with the reason when the
// server stops first (cancel).
std::shared_ptr<ExecutorTask> CalibrationTask(std::shared_ptr<ModelQueue> q,
                                              const CalibrationOptions& options,
                                              const std::vector<ExecutorSpec>& executors,
                                              std::function<void(BatchCalibration)> done);

}  // namespace inferd::scheduler
