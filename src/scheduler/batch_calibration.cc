#include "scheduler/batch_calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/cpu_time.h"

namespace inferd::scheduler {

CallTimer ThreadCpuTimer() {
  return [](const std::function<void()>& call) {
    const double t0 = ThreadCpuSeconds();
    call();
    return (ThreadCpuSeconds() - t0) * 1e3;
  };
}

CallTimer WallTimer() {
  return [](const std::function<void()>& call) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
}

CallTimer ExecutorTimer(int num_threads) {
  return num_threads <= 1 ? ThreadCpuTimer() : WallTimer();
}

std::string ExecutorClockName(int num_threads) {
  return num_threads <= 1 ? "executor thread CPU time" : "wall time";
}

std::vector<int> BatchCalibration::chosen_sizes() const {
  std::vector<int> out;
  for (const Size& s : sizes) {
    if (s.chosen) out.push_back(s.batch);
  }
  return out;
}

std::vector<int> CalibrationLadder(int max_batch_size) {
  std::vector<int> ladder;
  for (int b = 1; b < max_batch_size; b *= 2) ladder.push_back(b);
  if (max_batch_size >= 1) ladder.push_back(max_batch_size);
  return ladder;
}

double CalibrationBudget(const CalibrationOptions& options, int max_batch_size, double batch1_ms,
                         double spent_s) {
  int items = 0;
  for (int b : CalibrationLadder(max_batch_size)) items += b;
  const double need = spent_s + options.budget_margin * 4 * items * batch1_ms / 1e3;
  return std::min(std::max(need, options.budget_s), options.max_budget_s);
}

void ChooseBatchSizes(double min_gain, double max_batch_ms, BatchCalibration* c) {
  c->max_batch = 0;
  double best = 0;  // the lowest cost per item among the chosen sizes so far
  for (BatchCalibration::Size& s : c->sizes) {
    s.ms_per_item = s.batch > 0 ? s.latency_ms / s.batch : 0;
    s.chosen = false;
    s.too_long = false;
    if (s.batch == 1) {
      s.chosen = true;
    } else if (best > 0 && s.ms_per_item <= best * (1 - min_gain)) {
      s.too_long = max_batch_ms > 0 && s.latency_ms > max_batch_ms;
      s.chosen = !s.too_long;
    }
    if (s.chosen) {
      best = s.ms_per_item;
      c->max_batch = s.batch;
    }
  }
}

bool WorthMeasuring(int batch, double batch1_ms, double max_batch_ms) {
  return batch <= 1 || max_batch_ms <= 0 || batch * batch1_ms / 2 <= max_batch_ms;
}

std::vector<std::string> FormatCalibration(const BatchCalibration& c) {
  std::vector<std::string> lines;
  for (const BatchCalibration::Size& s : c.sizes) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "batch %d: %.2f ms, %.3f ms per item%s", s.batch, s.latency_ms,
                  s.ms_per_item,
                  s.chosen ? ", chosen" : s.too_long ? ", longer than max_batch_latency_ms" : "");
    lines.push_back(buf);
  }
  return lines;
}

}  // namespace inferd::scheduler
