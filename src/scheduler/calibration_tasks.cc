#include "scheduler/calibration_tasks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <future>

#include "scheduler/calibration_report.h"
#include "scheduler/internal/scheduled_model.h"

namespace inferd::scheduler {
namespace {

// A task that measures `m`'s batch sizes on an executor that may run it
// (`executors` gives each one's thread count, for its timer) and hands the
// result to `done` there, or an uncalibrated result with the reason when the
// server stops first (cancel).
std::shared_ptr<ExecutorTask> CalibrationTask(std::shared_ptr<ScheduledModel> m,
                                              const CalibrationOptions& options,
                                              const std::vector<ExecutorSpec>& executors,
                                              std::function<void(BatchCalibration)> done) {
  auto task = std::make_shared<ExecutorTask>();
  task->executors = m->spec().executor_ids;
  task->run = [m, options, executors, done](int executor) {
    CalibrationOptions o = options;
    const int threads = executors[static_cast<size_t>(executor)].num_threads;
    if (!o.timer) o.timer = ExecutorTimer(threads);
    BatchCalibration c;
    try {
      c = m->calibrator().Calibrate(o);
      if (c.calibrated) c.note += ", " + ExecutorClockName(threads);
    } catch (...) {
      c = BatchCalibration();
      c.note = "not calibrated: it threw";
    }
    done(std::move(c));
  };
  task->cancel = [done] {
    BatchCalibration none;
    none.note = "not calibrated: the server stopped first";
    done(std::move(none));
  };
  return task;
}

}  // namespace

CalibrationTasks::CalibrationTasks(Mutex* mu, CondVar* cv, Options options)
    : mu_(mu), cv_(cv), options_(std::move(options)) {}

void CalibrationTasks::AssertLockedBy([[maybe_unused]] Mutex* held) const { assert(held == mu_); }

bool CalibrationTasks::WouldCalibrate(const config::ModelConfig& config) const {
  return options_.calibrate && config.max_batch_size > 1 && config.dynamic_batching.calibrate;
}

void CalibrationTasks::CalibrateAtAdd(const std::shared_ptr<ScheduledModel>& m) {
  if (m->spec().known_calibration) {
    BatchCalibration known = *m->spec().known_calibration;
    known.seconds = 0;  // nothing measured at this load
    const bool measured = known.activation.measured();
    Publish(*m, std::move(known), "measured at an earlier load of this file");
    if (options_.measure_uncalibrated && !measured) Post(ActivationTask(m));
    return;
  }
  if (m->spec().defer_calibration && WouldCalibrate(m->config())) {
    BatchCalibration none;
    none.note = "deferred: measured once the model's requests queue";
    Publish(*m, std::move(none), "");
    MutexLock lock(mu_);
    m->AssertLockedBy(mu_);
    m->set_calibration_deferred(true);
    lock.Unlock();
    if (options_.measure_uncalibrated) Post(ActivationTask(m));
    return;
  }
  BatchCalibration result;
  if (!options_.calibrate) {
    result.note = "calibration is off for this server";
  } else if (WouldCalibrate(m->config())) {
    // Blocks the loading thread until an executor has measured the model.
    auto promise = std::make_shared<std::promise<BatchCalibration>>();
    Post(CalibrationTask(m, options_.calibration, options_.executors,
                         [promise](BatchCalibration c) { promise->set_value(std::move(c)); }));
    result = promise->get_future().get();
  } else {
    result = m->calibrator().Calibrate(options_.calibration);  // only explains why not
  }
  const bool measured = result.activation.measured();
  Publish(*m, std::move(result), "");
  if (options_.calibrate && options_.time_unbatched && m->config().max_batch_size <= 1 &&
      m->config().dynamic_batching.calibrate) {
    Post(TimingTask(m));  // measures the activation memory too
  } else if (options_.measure_uncalibrated && !measured) {
    Post(ActivationTask(m));
  }
}

// A model of max_batch_size 1 has no batch sizes to calibrate, but its
// execution limit needs a measurement: one forward, timed on an executor in
// the background (the model serves meanwhile, under the 60 s default).
std::shared_ptr<ExecutorTask> CalibrationTasks::TimingTask(std::shared_ptr<ScheduledModel> m) {
  auto task = std::make_shared<ExecutorTask>();
  task->executors = m->spec().executor_ids;
  task->run = [this, m, executors = options_.executors](int executor) {
    const int threads = executors[static_cast<size_t>(executor)].num_threads;
    std::string failure;
    double ms = -1;
    ActivationMemory activation;
    try {
      ms = m->calibrator().TimeOneForward(ExecutorTimer(threads), &failure,
                                          options_.measure_activation ? &activation : nullptr);
    } catch (...) {
      failure = "it threw";
    }
    if (activation.measured()) SetActivation(*m, activation);
    if (ms < 0) {
      spdlog::info("model '{}': max_batch_size 1, its forward not timed ({}): max_execution_ms "
                   "defaults to 60 s",
                   m->spec().name, failure);
      return;
    }
    MutexLock lock(mu_);
    ModelQueue& q = m->queue();
    q.AssertLockedBy(mu_);
    q.SetTimedForward(ms);
    spdlog::info("model '{}': max_batch_size 1, one forward timed at {:.2f} ms: batches are "
                 "given up after {} ms",
                 m->spec().name, ms,
                 std::chrono::duration_cast<std::chrono::milliseconds>(q.ExecutionLimit()).count());
  };
  task->cancel = [] {};
  return task;
}

std::shared_ptr<ExecutorTask> CalibrationTasks::ActivationTask(std::shared_ptr<ScheduledModel> m) {
  auto task = std::make_shared<ExecutorTask>();
  task->executors = m->spec().executor_ids;
  task->run = [this, m](int) {
    ActivationMemory a;
    try {
      a = m->calibrator().MeasureOneForward();
    } catch (...) {
      return;
    }
    if (a.measured()) SetActivation(*m, a);
  };
  task->cancel = [] {};
  return task;
}

void CalibrationTasks::SetActivation(ScheduledModel& m, const ActivationMemory& a) {
  bool removed = false;
  {
    MutexLock lock(mu_);
    m.AssertLockedBy(mu_);
    m.SetActivation(a);
    ModelQueue& q = m.queue();
    q.AssertLockedBy(mu_);
    removed = q.removed();
  }
  ReportActivation(removed ? nullptr : options_.metrics, m.spec().name,
                   {{"model", m.config().name}, {"version", m.spec().version}}, a);
}

void CalibrationTasks::MaybeStartDeferred(const std::shared_ptr<ScheduledModel>& m, int items) {
  m->AssertLockedBy(mu_);
  ModelQueue& q = m->queue();
  q.AssertLockedBy(mu_);
  if (!m->calibration_deferred() || stopping_ || (items <= 1 && q.empty())) return;
  m->set_calibration_deferred(false);
  spdlog::info("model '{}': requests queue; calibrating its batch sizes", m->spec().name);
  auto publish = [this, m](BatchCalibration c) { Publish(*m, std::move(c), ""); };
  tasks_.push_back(CalibrationTask(m, options_.calibration, options_.executors, publish));
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

// Logs the table, exports it and hands it to the model. `origin` says where
// a calibration not measured now came from.
void CalibrationTasks::Publish(ScheduledModel& m, BatchCalibration result,
                               const std::string& origin) {
  LogCalibration(m.spec().name, result, origin);
  bool removed = false;
  {
    MutexLock lock(mu_);
    ModelQueue& q = m.queue();
    q.AssertLockedBy(mu_);
    removed = q.removed();
  }
  // A deferred calibration that ends after its version was unloaded is not
  // exported: the repository removes an unloaded model's series, and these
  // would come back for a model no longer in memory.
  if (options_.metrics && !removed) {
    ExportCalibration(*options_.metrics,
                      {{"model", m.config().name}, {"version", m.spec().version}},
                      m.config().max_batch_size, result);
  }
  MutexLock lock(mu_);
  m.AssertLockedBy(mu_);
  m.SetCalibration(std::move(result));
}

}  // namespace inferd::scheduler
