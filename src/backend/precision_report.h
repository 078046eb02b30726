// The precision (and runtime) a backend chose for a model at load, and what it
// measured on each candidate (backend/torch/precision_choice.h fills it in; the
// model hands it out in ExecutionReport::precision), and its two forms, shared
// by `GET /v2/models/{m}` and `inferd topology --calibrate`:
//
// JSON (WritePrecisionJson): {"requested", "chosen", "runtime", "file", "samples",
//   "sample_source", "served_batch", "timed_batch",
//   "candidates": [{"runtime", "precision", "file", "built", "ms_per_item", "ms_alone",
//                   "ms_served", "max_rel_error",
//                   "top1_agreement" (agreed / checked; null when no sample had a
//                   clear fp32 margin), "top1_agreed", "top1_checked",
//                   "tolerance", "verdict"}]}
// Text (FormatPrecision): a head line, then a line per candidate.
// Pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/json_writer.h"

namespace inferd::backend {

// One candidate (a runtime and a precision) tried at load against torch fp32 on
// sample inputs (the torch backend: backend/torch/precision_choice.h).
struct PrecisionTrial {
  std::string precision;          // fp32 | bf16 | int8
  bool built = false;             // false: not built on this CPU or model (see verdict)
  double ms_per_item = 0;         // timed on the samples; 0 when not timed
  double ms_alone = 0;            // one item by itself (the first sample); 0 when not timed
  double max_relative_error = 0;  // max |out - fp32| / max |fp32| over samples and outputs
  int top1_checked = 0;           // classifier samples whose fp32 top-2 margin is clear
  int top1_agreed = 0;            // of those, the samples whose top-1 class matches fp32's
  double tolerance = 0;           // the error allowed
  std::string verdict;            // chosen | refused: why | accepted, not chosen: why | not built: why
  std::string runtime = "torchscript";  // torchscript | onnxruntime
  std::string file = "";          // the model file it runs (model.pt, model.opt.onnx, ...)
  // What the choice compares: the mean of the time per item over the served
  // batch sizes (backend/runtime_choice.h); 0 when not timed.
  double ms_served = 0;
};

struct PrecisionReport {
  std::string requested;  // the config's precision; empty when the backend has no choice
  std::string chosen;     // the precision Execute runs
  std::string runtime = "torchscript";  // the runtime Execute runs
  std::string file;       // the model file Execute runs; empty: the version's own
  int samples = 0;        // inputs each candidate ran
  std::string sample_source;
  int served_batch = 1;   // the largest batch the queue forms, as the choice assumed
  int timed_batch = 1;    // the batch ms_per_item was timed at (at most the samples')
  std::vector<PrecisionTrial> candidates;  // torch fp32 (the reference) first
};

// Whether `trial` is the candidate the report says is served.
bool IsChosen(const PrecisionTrial& trial, const PrecisionReport& report);

// The verdict in one word, for a metric label: chosen | reference (torch fp32
// not chosen) | accepted | refused | not_built.
std::string VerdictClass(const PrecisionTrial& trial, const PrecisionReport& report);

// Writes the report as one JSON object (the value of a "precision" key).
void WritePrecisionJson(JsonWriter& w, const PrecisionReport& report);

// "precision auto: torchscript bf16 (8 samples, drawn for the declared shapes;
// served batch 8, timed at 8)", then per candidate "  torchscript  bf16
// 0.123 ms/item, 0.200 alone  max error 4.10e-03 (tolerance 1.0e-02)  top-1 8/8
// chosen: ..." (on one line; "-" for a time not measured, "the reference" for
// torch fp32's tolerance).
std::vector<std::string> FormatPrecision(const PrecisionReport& report);

}  // namespace inferd::backend
