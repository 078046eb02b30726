#include "scheduler/calibration_tasks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <future>

#include "scheduler/calibration_report.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {

CalibrationTasks::CalibrationTasks(Mutex* mu, CondVar* cv, Options options)
    : mu_(mu), cv_(cv), options_(std::move(options)) {}

void CalibrationTasks::AssertLockedBy([[maybe_unused]] Mutex* held) const { assert(held == mu_); }

bool CalibrationTasks::WouldCalibrate(const config::ModelConfig& config) const {
  return options_.calibrate && config.max_batch_size > 1 && config.dynamic_batching.calibrate;
}

void CalibrationTasks::CalibrateAtAdd(const std::shared_ptr<ModelQueue>& q) {
  if (q->spec().known_calibration) {
    BatchCalibration known = *q->spec().known_calibration;
    known.seconds = 0;  // nothing measured at this load
    Publish(*q, std::move(known), "measured at an earlier load of this file");
    return;
  }
  if (q->spec().defer_calibration && WouldCalibrate(q->config())) {
    BatchCalibration none;
    none.note = "deferred: measured once the model's requests queue";
    Publish(*q, std::move(none), "");
    MutexLock lock(mu_);
    q->AssertLockedBy(mu_);
    q->set_calibration_deferred(true);
    return;
  }
  BatchCalibration result;
  if (!options_.calibrate) {
    result.note = "calibration is off for this server";
  } else if (WouldCalibrate(q->config())) {
    // Blocks the loading thread until an executor has measured the model.
    auto promise = std::make_shared<std::promise<BatchCalibration>>();
    Post(CalibrationTask(q, options_.calibration, options_.executors,
                         [promise](BatchCalibration c) { promise->set_value(std::move(c)); }));
    result = promise->get_future().get();
  } else {
    result = q->calibrator().Calibrate(options_.calibration);  // only explains why not
  }
  Publish(*q, std::move(result), "");
}

void CalibrationTasks::MaybeStartDeferred(const std::shared_ptr<ModelQueue>& q, int items) {
  q->AssertLockedBy(mu_);
  if (!q->calibration_deferred() || stopping_ || (items <= 1 && q->empty())) return;
  q->set_calibration_deferred(false);
  spdlog::info("model '{}': requests queue; calibrating its batch sizes", q->spec().name);
  auto publish = [this, q](BatchCalibration c) { Publish(*q, std::move(c), ""); };
  tasks_.push_back(CalibrationTask(q, options_.calibration, options_.executors, publish));
  cv_->SignalAll();
}

bool CalibrationTasks::RunOne(int executor) {
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    const auto& allowed = (*it)->executors;
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), executor) != allowed.end()) {
      auto task = *it;
      tasks_.erase(it);
      mu_->Unlock();
      task->run(executor);
      mu_->Lock();
      return true;
    }
  }
  return false;
}

void CalibrationTasks::CancelAll() {
  std::deque<std::shared_ptr<ExecutorTask>> tasks;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    tasks.swap(tasks_);
  }
  for (auto& t : tasks) t->cancel();
}

void CalibrationTasks::Post(std::shared_ptr<ExecutorTask> task) {
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      tasks_.push_back(std::move(task));
      task = nullptr;
    }
  }
  if (task) {
    task->cancel();
    return;
  }
  cv_->SignalAll();
}

// Logs the table, exports it and hands it to the queue. `origin` says where
// a calibration not measured now came from.
void CalibrationTasks::Publish(ModelQueue& q, BatchCalibration result, const std::string& origin) {
  LogCalibration(q.spec().name, result, origin);
  bool removed = false;
  {
    MutexLock lock(mu_);
    q.AssertLockedBy(mu_);
    removed = q.removed();
  }
  // A deferred calibration that ends after its version was unloaded is not
  // exported: the repository removes an unloaded model's series, and these
  // would come back for a model no longer in memory.
  if (options_.metrics && !removed) {
    ExportCalibration(*options_.metrics,
                      {{"model", q.config().name}, {"version", q.spec().version}},
                      q.config().max_batch_size, result);
  }
  MutexLock lock(mu_);
  q.AssertLockedBy(mu_);
  q.SetCalibration(std::move(result));
}

}  // namespace inferd::scheduler
