// BatchCalibration: which batch sizes pay for a model on this machine,
// measured once at load on an executor (BatchCalibrator) and used by
// the model's queue to form batches.
//
// A batch is worth forming only when it costs less per item than smaller
// ones: with a slow allocator a batch of 8 cost 5x a batch of 1 per item, and
// on a heavy model a large batch makes the unlucky requests wait for a whole
// batch before their own. The measured sizes are 1, 2, 4, ... up to
// max_batch_size (and max_batch_size itself); a size is chosen when its cost
// per item is at least `min_gain` below the best of the smaller sizes, and
// its batch takes at most `max_batch_ms` (the config's max_batch_latency_ms:
// a request that just misses a batch waits for all of it). The queue forms
// batches of up to the largest chosen size (`max_batch`), and never one
// whose size costs more per item than batch 1.
//
// Plain data and pure functions; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scheduler/activation_memory.h"
#include "scheduler/length_buckets.h"

namespace inferd::scheduler {

// Runs `call` and returns what it cost, in ms.
using CallTimer = std::function<double(const std::function<void()>& call)>;
// The calling thread's CPU time: for an executor whose intra-op pool is that
// one thread, a figure that a loaded machine does not inflate.
CallTimer ThreadCpuTimer();
// Wall time, for executors with several intra-op threads.
CallTimer WallTimer();

// The clock an executor of `num_threads` intra-op threads calibrates with, as
// the scheduler chooses it: ThreadCpuTimer for one thread (its CPU time is the
// whole cost), else WallTimer (the pool's other threads work too). The name is
// what the calibration's note ends with ("executor thread CPU time", "wall time").
CallTimer ExecutorTimer(int num_threads);
std::string ExecutorClockName(int num_threads);

struct CalibrationOptions {
  // Measuring stops growing the ladder, and timing rounds, past the budget:
  // CalibrationBudget scales it from batch 1's cost, between these two.
  double budget_s = 1.5;       // the least budget (light models take this)
  double max_budget_s = 10.0;  // the hard cap (a heavy model's load waits this long at most)
  double budget_margin = 1.25;  // slack on the estimate for first calls of a shape
  int max_rounds = 5;     // timed passes over the ladder (at least 2 when they fit)
  double min_gain = 0.05;  // a larger size must save this share of the cost per item
  // How calls are timed; empty: ThreadCpuTimer on single-threaded
  // executors, else WallTimer. Tests inject a fake.
  CallTimer timer;
};

struct BatchCalibration {
  struct Size {
    int batch = 0;
    double latency_ms = 0;   // the fastest of the timed calls at this size
    double ms_per_item = 0;
    bool chosen = false;
    bool too_long = false;   // it saves enough per item, but its batch takes over max_batch_ms
  };
  bool calibrated = false;  // false: not measured (see note); the config's sizes apply
  std::string note;         // why not measured, or how (rounds, clock)
  std::vector<Size> sizes;  // ascending
  int max_batch = 0;        // the largest chosen size; 0 when not calibrated
  double seconds = 0;       // what the calibration cost at load
  // Variable lengths (length_buckets.h): the measured forwards and the cost
  // model fitted to them, which cuts batches by length.
  bool by_length = false;
  std::vector<CostPoint> length_points;
  LengthCost length_cost;
  // What one forward needs beyond the resident memory, per item (and per
  // token): measured after the timed rounds on the largest shape measured,
  // or, for a model not calibrated, on one forward of batch 1
  // (activation_memory.h). Memory admission reads it.
  ActivationMemory activation;

  // The chosen sizes, ascending (1 first).
  std::vector<int> chosen_sizes() const;
};

// The ladder to measure for `max_batch_size`: 1, 2, 4, ... and the max itself.
std::vector<int> CalibrationLadder(int max_batch_size);

// The budget, in seconds of the calibration, once batch 1 was warmed and cost
// `batch1_ms` after `spent_s`: enough for two warm-up and two timed calls of
// every size on the ladder if the cost per item did not fall (an upper bound:
// it falls when batching pays), times budget_margin; at least budget_s, at
// most max_budget_s. A fixed budget let ResNet-50 (122 ms per item) measure
// batch 1 alone. Pure.
double CalibrationBudget(const CalibrationOptions& options, int max_batch_size, double batch1_ms,
                         double spent_s);

// Marks the chosen sizes and max_batch from measured latencies (ascending
// batch, latency_ms set); max_batch_ms <= 0: no bound on a batch's latency.
// Pure.
void ChooseBatchSizes(double min_gain, double max_batch_ms, BatchCalibration* calibration);

// Whether the ladder should measure `batch` at all: not when even a cost per
// item half of batch 1's would make its batch take over max_batch_ms (a
// larger size only takes longer). Pure.
bool WorthMeasuring(int batch, double batch1_ms, double max_batch_ms);

// One line per size, for the log: "batch 4: 8.1 ms, 2.02 ms/item, chosen".
std::vector<std::string> FormatCalibration(const BatchCalibration& calibration);

}  // namespace inferd::scheduler
