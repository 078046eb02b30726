// OptimizeReport: what `inferd optimize` made of one version of a model and
// what it measured (docs/OPTIMIZE.md): one row per candidate (the TorchScript
// reference, the ONNX export, the graph after ONNX Runtime's fusions, the
// int8 copy), each with its file, what became of it, and its error against
// the TorchScript fp32 outputs on the same samples.
//
// The report is kept in the version folder as optimize.json with the stamp of
// what it was made from (model.pt's digest, the export script's, the config's
// tensors): an up-to-date report is read back and printed, nothing is made
// again. WriteReportJson / ParseReportJson round-trip; PrintReport is the
// table on stdout.
// Plain data and pure functions; any thread.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::optimize {

inline constexpr int kReportFormat = 1;

struct CandidateRow {
  std::string candidate;     // "torchscript", "onnx", "onnx_optimized", "onnx_int8"
  std::string file;          // the file name in the version folder
  bool present = false;      // the file is there (made now or kept from model.pt)
  std::string result;        // "the reference", "exported (opset 17)", "not exported: <why>", ...
  bool compared = false;     // ran on every sample; the figures below are set
  std::string error;         // why it could not run the samples (present, not compared)
  double max_abs_error = 0;  // max |candidate - reference| over every output element
  double max_rel_error =
      0;                   // the same over the largest |reference| of that output, max over outputs
  int top1_agreed = 0;     // samples whose arg-max agrees, on [batch, classes] outputs
  int top1_checked = 0;    // samples with such an output (0: none; shown as "-")
  double ms_per_item = 0;  // the fastest of 3 timed passes over the samples, wall time
};

struct OptimizeReport {
  int format = kReportFormat;
  std::string stamp;  // what the candidates were made from (optimize_stamp.h)
  std::string model;
  int64_t version = 0;
  int samples = 0;                 // items compared, each alone (and in batches)
  std::string sample_source;       // "images in samples/", "drawn for the declared shapes", ...
  std::vector<CandidateRow> rows;  // the reference first
};

std::string WriteReportJson(const OptimizeReport& report);
// kInvalidArgument naming what is wrong when `json` is not a report of this format.
StatusOr<OptimizeReport> ParseReportJson(std::string_view json);

// The table: a heading line (model, version, samples, `note` when not empty)
// and one line per candidate.
void PrintReport(const OptimizeReport& report, std::string_view note, std::ostream& out);

}  // namespace inferd::optimize
