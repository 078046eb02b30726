// ScheduledModel: one model version as the scheduler holds it, where its
// three one-way parts meet:
//   ModelQueue      (model_queue.h)      forms batches; knows nothing of who
//                                        runs them, records no metrics
//   BatchRunner     (batch_runner.h)     runs a batch on an executor; the one
//                                        recorder of inferd_batch_size
//   BatchCalibrator (batch_calibrator.h) measures which batch sizes pay
// None of them sees another. As TF Serving's SharedBatchScheduler::AddQueue
// takes a queue's options and, built outside the queue, the callback that
// processes its batches, Scheduler::Impl::AddModel gives the queue a
// QueueSpec and the runner the model, its hooks and its series; the executor
// loop hands each batch from the queue to the runner, and SetCalibration
// hands a calibration's result to the queue (its sizes) and to the runner
// (its length cost).
//
// Callers outside the scheduler hold it as an opaque handle (scheduler.h).
// Thread-safety: spec, metrics, runner and calibrator are immutable or
// thread-safe of their own; the queue's state (its own annotations) and the
// calibration below are guarded by the scheduler's mutex, given at
// construction (AssertLockedBy). Ownership: shares the model and hooks
// with the runner and the calibrator.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "metrics/registry.h"
#include "scheduler/batch_calibration.h"
#include "scheduler/batch_calibrator.h"
#include "scheduler/batch_runner.h"
#include "scheduler/memory_admission.h"
#include "scheduler/model_queue.h"
#include "scheduler/model_spec.h"

namespace inferd::scheduler {

class ScheduledModel {
 public:
  // The scheduler's series of this model version (its runner has its own:
  // batch sizes and tokens). Null without a registry. Shared: the repository
  // removes a model's series once none of its versions is in memory
  // (metrics::Registry::RemoveSeries), and the scheduler may still count the
  // last requests after that.
  struct Metrics {
    std::shared_ptr<metrics::Gauge> queue_depth;
    std::shared_ptr<metrics::Counter> queue_full;
    std::shared_ptr<metrics::Counter> deadline;
    std::shared_ptr<metrics::Counter> cancelled;
    std::shared_ptr<metrics::Counter> draining;
    std::shared_ptr<metrics::Counter> queue_bytes;  // refused for max_queue_bytes
    // Results that came after their request was answered (504 at its
    // deadline while the batch ran, or the batch given up): dropped.
    std::shared_ptr<metrics::Counter> late_results;
    // Batches of one lone request run on the cores of idle executors too
    // (lone_request_width.h).
    std::shared_ptr<metrics::Counter> wide_batches;
  };

  // `mu`: the scheduler's mutex (outlives this). `clock` times the runner's
  // stages and the calibrator's budget. `registry` may be null (no series).
  // `executors`: how many the scheduler has (ModelQueue::set_executors).
  // `probe` measures the model's activation memory (off: not measured);
  // `admission` is the process's memory limit (null: none).
  ScheduledModel(ModelSpec spec, Mutex* mu, Clock* clock, metrics::Registry* registry,
                 int executors, MemoryProbe probe = {},
                 std::shared_ptr<MemoryAdmission> admission = nullptr);

  // As ModelQueue::AssertLockedBy: holding `held` is holding mu_.
  void AssertLockedBy(Mutex* held) const REQUIRES(held) ASSERT_CAPABILITY(mu_);

  const ModelSpec& spec() const { return spec_; }
  const config::ModelConfig& config() const { return spec_.config; }
  const Metrics& metrics() const { return metrics_; }
  ModelQueue& queue() { return queue_; }
  const ModelQueue& queue() const { return queue_; }
  // Usable without the scheduler's mutex while the model is held.
  BatchRunner& runner() { return runner_; }
  const BatchCalibrator& calibrator() const { return calibrator_; }

  // The calibration in use (batch_calibration.h): kept whole for
  // Scheduler::GetCalibration; a calibrated one sets the queue's sizes (an
  // uncalibrated one leaves the spec's), one by length the runner's cost.
  // A calibration without an activation figure keeps the one measured before.
  void SetCalibration(BatchCalibration calibration) REQUIRES(mu_);
  // The activation memory of one forward measured apart from a calibration
  // (a model that is not calibrated): kept in the calibration shown, and
  // handed to the runner (memory admission).
  void SetActivation(const ActivationMemory& activation) REQUIRES(mu_);
  const BatchCalibration& calibration() const REQUIRES(mu_) { return calibration_; }
  // Calibration waits for queued traffic (ModelSpec::defer_calibration).
  void set_calibration_deferred(bool deferred) REQUIRES(mu_) { calibration_deferred_ = deferred; }
  bool calibration_deferred() const REQUIRES(mu_) { return calibration_deferred_; }

  // Requests in the batch taken from this model's queue before the one now
  // (lone_request_width.h); 1 before any.
  size_t last_batch_requests() const REQUIRES(mu_) { return last_batch_requests_; }
  void set_last_batch_requests(size_t n) REQUIRES(mu_) { last_batch_requests_ = n; }

  // Sets the queue-depth gauge to the queue's size.
  void PublishDepth() const REQUIRES(mu_);

  // Executor threads given up in this model's forwards (hung, or nobody
  // waited for them) that have not returned yet.
  int stuck() const REQUIRES(mu_) { return stuck_; }
  void add_stuck(int n) REQUIRES(mu_) { stuck_ += n; }

 private:
  Mutex* const mu_;
  const ModelSpec spec_;
  const Metrics metrics_;
  ModelQueue queue_;
  BatchRunner runner_;
  const BatchCalibrator calibrator_;
  BatchCalibration calibration_ GUARDED_BY(mu_);
  bool calibration_deferred_ GUARDED_BY(mu_) = false;
  size_t last_batch_requests_ GUARDED_BY(mu_) = 1;
  int stuck_ GUARDED_BY(mu_) = 0;
};

}  // namespace inferd::scheduler
