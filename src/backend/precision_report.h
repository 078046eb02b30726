// The precision a backend chose for a model at load, and what it measured on
// each candidate (backend/torch/precision_choice.h fills it in; the torch
// model keeps it, TorchModel::precision_report). Plain data.
#pragma once

#include <string>
#include <vector>

namespace inferd::backend {

// One precision tried at load against fp32 on sample inputs (the torch
// backend: backend/torch/precision_choice.h).
struct PrecisionTrial {
  std::string precision;          // fp32 | bf16 | int8
  bool built = false;             // false: not built on this CPU or model (see verdict)
  double ms_per_item = 0;         // timed on the samples; 0 when not timed
  double max_relative_error = 0;  // max |out - fp32| / max |fp32| over samples and outputs
  int top1_checked = 0;           // classifier samples whose fp32 top-2 margin is clear
  int top1_agreed = 0;            // of those, the samples whose top-1 class matches fp32's
  double tolerance = 0;           // the error allowed
  std::string verdict;            // chosen | refused: why | accepted, not chosen: why | not built: why
};

struct PrecisionReport {
  std::string requested;  // the config's precision; empty when the backend has no choice
  std::string chosen;     // what Execute runs
  int samples = 0;        // inputs each candidate ran
  std::string sample_source;
  std::vector<PrecisionTrial> candidates;  // fp32 first
};

}  // namespace inferd::backend
