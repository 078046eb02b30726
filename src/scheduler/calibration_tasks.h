// CalibrationTasks: measuring a model's batch sizes on an executor with its
// BatchCalibrator (batch_calibrator.h), as work the executors take before
// batches.
//
// At AddModel a model is calibrated at once (the loading thread blocks until
// an executor has measured it), adopts a calibration measured at an earlier
// load, or defers it until its requests queue (ModelSpec::defer_calibration);
// the result is logged, exported and handed to the model (Publish:
// ScheduledModel::SetCalibration gives the queue its sizes and the runner
// its length cost).
//
// Thread-safety: the scheduler's mutex (given at construction) guards the
// task list; methods marked REQUIRES(mu_) are called with it held, the others
// take it. cv is the scheduler's "work arrived" condition, signalled when a
// task is queued.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "common/thread_annotations.h"
#include "metrics/registry.h"
#include "scheduler/batch_calibration.h"
#include "scheduler/executor_task.h"
#include "scheduler/model_spec.h"

namespace inferd::scheduler {

class ScheduledModel;

class CalibrationTasks {
 public:
  struct Options {
    bool calibrate = true;  // Scheduler::Options::calibrate
    bool time_unbatched = false;  // Scheduler::Options::time_unbatched
    CalibrationOptions calibration;
    std::vector<ExecutorSpec> executors;
    metrics::Registry* metrics = nullptr;  // may be null
    // Measure activation memory (Scheduler::Options::memory_probe is set):
    // at calibration, and on the warming call of a max_batch_size 1 model's
    // timing.
    bool measure_activation = false;
    // And, for a model neither measures (`calibrate: false`, deferred, not
    // timed), with one forward of its own in the background: only when a
    // memory limit makes the figure needed, since that forward may take
    // seconds of an executor (a deliberately slow candidate model).
    bool measure_uncalibrated = false;
  };
  CalibrationTasks(Mutex* mu, CondVar* cv, Options options);

  // Tells the analysis that the owner's `held` is the mutex given at
  // construction.
  void AssertLockedBy(Mutex* held) const REQUIRES(held) ASSERT_CAPABILITY(mu_);

  // Calibrates a model just added, before it is shared (see the top). Called
  // without the lock, from a loading thread, never an executor.
  void CalibrateAtAdd(const std::shared_ptr<ScheduledModel>& m);
  // A batch of `m` with `items` items was just taken: the first time requests
  // of a model with a deferred calibration queue, it starts in the background.
  void MaybeStartDeferred(const std::shared_ptr<ScheduledModel>& m, int items) REQUIRES(mu_);
  // Runs one task that executor `executor` may run, unlocked; false when none.
  bool RunOne(int executor) REQUIRES(mu_);
  // Whether a task waits for an executor.
  bool pending() const REQUIRES(mu_) { return !tasks_.empty(); }
  // Cancels every task queued, and all posted from now on (stopping).
  void CancelAll();

 private:
  bool WouldCalibrate(const config::ModelConfig& config) const;
  void Post(std::shared_ptr<ExecutorTask> task);
  // Times one forward of a model that is not calibrated (max_batch_size 1)
  // for its execution limit (ModelQueue::SetTimedForward).
  std::shared_ptr<ExecutorTask> TimingTask(std::shared_ptr<ScheduledModel> m);
  // Measures the activation memory of one forward of a model whose
  // calibration did not (ScheduledModel::SetActivation).
  std::shared_ptr<ExecutorTask> ActivationTask(std::shared_ptr<ScheduledModel> m);
  // Hands a figure measured apart from a calibration to the model, logs and
  // exports it (not for a model removed meanwhile).
  void SetActivation(ScheduledModel& m, const ActivationMemory& a) EXCLUDES(mu_);
  void Publish(ScheduledModel& m, BatchCalibration result, const std::string& origin);

  Mutex* const mu_;
  CondVar* const cv_;
  const Options options_;
  std::deque<std::shared_ptr<ExecutorTask>> tasks_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
};

}  // namespace inferd::scheduler
