// The rule `precision: auto` serves by: given every candidate's verdict from
// the accuracy guard and its measured times, which one is served (torch fp32,
// bf16, int8; ONNX Runtime fp32, int8), and a verdict for each.
//
// Judged on the batch sizes the model is served at. A served model spends its
// forwards at two ends: a request that arrives alone (low load, the latency a
// client sees) and a batch of the largest size the queue forms (load, where
// the throughput is made). Both are measured per item at load: `ms_alone`
// (one item) and `ms_per_item` (a batch of `served_batch` items, at most the
// samples' batch). The rule:
//
//   1. cost = the mean of the time per item over the served sizes: {1} for a
//      model that does not batch (served_batch 1), else {1, served_batch}:
//      (ms_alone + ms_per_item) / 2. Neither end decides alone: bf16's 1.59x
//      per item batched and 1.05x alone (ResNet-50) is a 1.29x lower cost.
//   2. eligible: kept by the guard, servable by auto (not torch int8 with this
//      libtorch), and at no served size more than kMaxLoss slower than the
//      reference (torch fp32): a batch's gain must not be bought with a lone
//      request's latency (int8 at 1.46x batched but 0.60x alone is not).
//   3. the eligible candidate of the least cost is served when it saves at
//      least kMinSaving of the reference's cost; otherwise the reference.
//
// ServedBatch says which batch stands for "served": an earlier calibration's
// largest batch when the loader knows it, else the config's largest
// preferred size, else its max_batch_size.
// Pure functions; any thread.
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"

namespace inferd::backend {

inline constexpr double kMinSaving = 0.05;
inline constexpr double kMaxLoss = 0.05;

struct CandidateTiming {
  std::string label;         // "torchscript bf16": how verdicts name it
  bool kept = false;         // built and within the guard (timed)
  std::string not_servable;  // why auto may not serve it; empty: it may
  double ms_per_item = 0;    // per item in a batch of the served batch size
  double ms_alone = 0;       // one item by itself
};

struct RuntimeChoice {
  size_t chosen = 0;                  // index; 0 is the reference
  std::vector<double> ms_served;      // per candidate: its cost; 0 when not kept
  std::vector<std::string> verdicts;  // per candidate; empty for one not kept
};

// The largest batch the queue forms: `calibrated` when > 0, else the largest
// of the config's preferred_batch_sizes, else max_batch_size; at least 1.
int ServedBatch(const config::ModelConfig& config, int calibrated);

// Rule 1: the mean time per item over the served sizes.
double ServedCost(const CandidateTiming& c, int served_batch);

// `candidates[0]` is the reference (torch fp32), always kept; `served_batch`
// is the batch ms_per_item was timed at (1: the model does not batch).
// Verdicts:
// "chosen: 1.29x torch fp32's speed on the served sizes (1.59x per item at
// batch 8, 1.05x alone)", "accepted, not chosen: ...", "the reference", and
// the reason a candidate was not eligible.
RuntimeChoice ChooseRuntime(const std::vector<CandidateTiming>& candidates, int served_batch);

}  // namespace inferd::backend
