#include "bench/windowed_measurement.h"

#include <algorithm>
#include <chrono>

namespace inferd::bench {

std::size_t FirstAtOrAfter(std::span<const Sample> samples, TimePoint t) {
  return static_cast<std::size_t>(
      std::partition_point(samples.begin(), samples.end(),
                           [t](const Sample& s) { return s.done < t; }) -
      samples.begin());
}

WindowedMeasurement::WindowedMeasurement(TimePoint measure_start, Duration window,
                                         StabilityRule rule, int max_windows)
    : start_(measure_start), window_(window), rule_(rule), max_windows_(max_windows) {}

TimePoint WindowedMeasurement::NextWindowEnd() const {
  return start_ + window_ * static_cast<std::int64_t>(history_.size() + 1);
}

bool WindowedMeasurement::CloseWindow(std::span<const Sample> samples) {
  if (bounds_.empty()) bounds_.push_back(FirstAtOrAfter(samples, start_));
  const std::size_t end = FirstAtOrAfter(samples, NextWindowEnd());
  const std::size_t begin = bounds_.back();
  bounds_.push_back(end);
  const double seconds = std::chrono::duration<double>(window_).count();
  history_.push_back(WindowStatsOf(samples.subspan(begin, end - begin), seconds));
  stable_ = rule_.IsStable(history_);
  return stable_ || windows_run() >= max_windows_;
}

void WindowedMeasurement::Summarize(std::span<const Sample> samples, StepResult* step) const {
  step->stable = stable_;
  step->windows_run = windows_run();
  if (history_.empty()) {
    SummarizeSamples({}, 0, step);
    return;
  }
  const std::size_t reported =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(rule_.windows, 1)), history_.size());
  const std::size_t first = bounds_[bounds_.size() - 1 - reported];
  const double seconds =
      std::chrono::duration<double>(window_).count() * static_cast<double>(reported);
  SummarizeSamples(samples.subspan(first, bounds_.back() - first), seconds, step);
}

}  // namespace inferd::bench
