// BatchCalibrator: measures which batch sizes pay for one model version on
// the calling thread (an executor, or `inferd topology --calibrate`'s thread
// set up as one). Measuring is not serving: the runner (batch_runner.h) never
// calibrates, and this class never answers a request.
//
// Calibrate times the model on zero inputs, batch 1, 2, 4, ... up to
// max_batch_size, and chooses the sizes worth forming (batch_calibration.h).
// A model of variable lengths (length_buckets.h: LengthInput) is measured on a
// grid of batch sizes and lengths instead, and the result carries the fitted
// length_cost that the runner cuts its batches by.
//
// Two clocks, for two questions: each forward's cost comes from the
// CalibrationOptions' timer (thread CPU time or wall time, as the executor's
// intra-op pool calls for), and the budget (how long the whole measurement
// may take) from the injected Clock, so that a test's fake clock decides
// when the budget has passed.
//
// Thread-safety: Calibrate is const and may be called from several threads
// at once (the model's Execute allows it). Ownership: shares the model; the
// clock is borrowed and outlives the calibrator.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "common/clock.h"
#include "config/model_config.h"
#include "journal/forward_journal.h"
#include "scheduler/activation_memory.h"
#include "scheduler/batch_calibration.h"

namespace inferd::scheduler {

class BatchCalibrator {
 public:
  struct Options {
    std::string name;  // "model:version", in notes
    config::ModelConfig config;
    std::shared_ptr<backend::Model> model;
    Clock* clock = Clock::Real();  // the budget's clock
    // Reads the process's memory for the activation figure; off (not
    // measured, no extra forward) when not set.
    MemoryProbe probe;
    // Marks each forward it runs in the crash journal, as the runner's are
    // (a model that crashes while it is calibrated is named); empty: none.
    journal::ForwardMark forward_mark;
  };
  explicit BatchCalibrator(Options options);

  // Measures the model's cost per batch size (zero inputs, the model alone)
  // and chooses the sizes worth forming. Blocks for up to about
  // CalibrationBudget (options.budget_s to options.max_budget_s, scaled from
  // batch 1's cost) by the clock. Returns an uncalibrated result with a note
  // when the model cannot be measured (max_batch_size 1, `calibrate: false`,
  // variable or BYTES inputs, a model that fails on zeros). Calls are timed
  // with options.timer (it must be set). A model of variable lengths gets
  // by_length and the fitted length_cost, and stays uncalibrated in batch
  // sizes.
  BatchCalibration Calibrate(const CalibrationOptions& options) const;
  // For a model that is not calibrated (max_batch_size 1): one forward of
  // batch 1 on zero inputs, timed by `timer`, in ms, after one call that
  // warms it (skipped when that call alone took over a second). -1 when
  // the inputs cannot be made (variable dims, BYTES) or the model failed
  // (`failure` says why). Its execution limit derives from it. With
  // `activation`, the warming call's activation memory is measured into it
  // (the timed call stays free of the measurement's page faults).
  double TimeOneForward(const CallTimer& timer, std::string* failure,
                        ActivationMemory* activation = nullptr) const;
  // For a model that is not calibrated: the activation memory of one
  // forward of batch 1 on zero inputs (a model of variable lengths: ones of
  // its longest length). Unmeasured when the probe is off, the inputs cannot
  // be made (BYTES) or the model failed.
  ActivationMemory MeasureOneForward() const;

 private:
  BatchCalibration CalibrateLengths(const CalibrationOptions& options) const;
  // One forward of `inputs` (`batch` items of `length` tokens, 0: fixed
  // dims) measured by the probe; unmeasured when it is off or the model fails.
  ActivationMemory Measure(int batch, int64_t length, const std::vector<NamedTensor>& inputs) const;
  // Seconds by the clock since `start`.
  double SecondsSince(TimePoint start) const;

  const Options options_;
  const int length_input_;  // LengthInput(config), or -1
};

}  // namespace inferd::scheduler
