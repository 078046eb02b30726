// ExecutorTask: work for one executor outside of batches, run before batches
// (the Scheduler's task queue); today a model's batch-size calibration
// (calibration_tasks.h).
#pragma once

#include <functional>
#include <vector>

namespace inferd::scheduler {

struct ExecutorTask {
  std::vector<int> executors;             // that may run it; empty = any
  std::function<void(int executor)> run;  // on the executor, unlocked; must not throw
  std::function<void()> cancel;           // instead of run, when stopping
};

}  // namespace inferd::scheduler
