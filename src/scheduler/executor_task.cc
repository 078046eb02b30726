#include "scheduler/executor_task.h"

#include "scheduler/model_queue.h"

namespace inferd::scheduler {

std::shared_ptr<ExecutorTask> CalibrationTask(std::shared_ptr<ModelQueue> q,
                                              const CalibrationOptions& options,
                                              const std::vector<ExecutorSpec>& executors,
                                              std::function<void(BatchCalibration)> done) {
  auto task = std::make_shared<ExecutorTask>();
  task->executors = q->spec().executor_ids;
  task->run = [q, options, executors, done](int executor) {
    CalibrationOptions o = options;
    const int threads = executors[static_cast<size_t>(executor)].num_threads;
    if (!o.timer) o.timer = ExecutorTimer(threads);
    BatchCalibration c;
    try {
      c = q->calibrator().Calibrate(o);
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

}  // namespace inferd::scheduler
