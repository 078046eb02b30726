// WindowedMeasurement: cuts a load step's samples into fixed windows after the
// warm-up, decides when the step has measured enough, and summarises the
// windows it reports.
//
// Windows are [start + k*window, start + (k+1)*window), by completion time.
// After each window the StabilityRule is checked; the step ends when it holds
// or after `max_windows`. The step reports its last `rule.windows` windows
// (the ones that agreed, when stable). Time comes only from the samples and
// the boundaries the caller runs to, so tests drive it with made-up times.
//
// Thread-safety: none; one owner.
#pragma once

#include <span>
#include <vector>

#include "bench/stability_rule.h"
#include "bench/step_result.h"
#include "common/clock.h"

namespace inferd::bench {

class WindowedMeasurement {
 public:
  WindowedMeasurement(TimePoint measure_start, Duration window, StabilityRule rule,
                      int max_windows);

  // Where the current window ends: the caller lets load run until then.
  TimePoint NextWindowEnd() const;

  // Closes the current window over `samples` (in completion order, as the
  // generator records them, possibly with more after the boundary). Returns
  // true when the step should end: stable, or `max_windows` reached.
  bool CloseWindow(std::span<const Sample> samples);

  const std::vector<WindowStats>& history() const { return history_; }
  bool stable() const { return stable_; }
  int windows_run() const { return static_cast<int>(history_.size()); }

  // Fills `step`'s counts, throughput, latency, stable and windows_run from the
  // reported windows of `samples` (the same vector CloseWindow saw).
  void Summarize(std::span<const Sample> samples, StepResult* step) const;

 private:
  TimePoint start_;
  Duration window_;
  StabilityRule rule_;
  int max_windows_;
  std::vector<std::size_t> bounds_;  // bounds_[k]: first sample of window k
  std::vector<WindowStats> history_;
  bool stable_ = false;
};

// Index of the first sample of `samples` (sorted by done) finished at or after `t`.
std::size_t FirstAtOrAfter(std::span<const Sample> samples, TimePoint t);

}  // namespace inferd::bench
