// VersionOptimizer: the candidates of one version of one TorchScript model
// (docs/OPTIMIZE.md), written beside its model.pt, which is only ever read:
//
//   model.onnx       torch.onnx.export of model.pt (tools/optimize_export.py)
//   model.opt.onnx   model.onnx after ONNX Runtime's extended graph fusions,
//                    saved by the onnxruntime backend (Backend::WriteOptimizedModel)
//   model.int8.onnx  model.onnx with int8 weights in its matrix products
//                    (dynamic quantization, tools/optimize_export.py)
//   optimize.json    the report: what was made, why not, and each candidate's
//                    error against model.pt's fp32 outputs on the samples
//
// Each file is written under a temporary name in the same folder and renamed
// into place, so a reader never sees half a file. A candidate that cannot be
// made this time is removed if an older one is there (it was made from
// another model.pt). Up to date (the report's stamp equals the stamp of
// model.pt, the export script and the config's tensors, and its files are
// all there): nothing is made or written, the report is read back.
//
// Thread-compatible: one version at a time. The backends are borrowed:
// `torch` (required) loads the reference, `onnx` (null when the binary has no
// onnxruntime backend) writes model.opt.onnx and loads the ONNX candidates.
#pragma once

#include <string>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "optimize/optimize_report.h"

namespace inferd::optimize {

struct VersionJob {
  config::ModelConfig config;
  std::string model_dir;    // DIR/<model>
  std::string version_dir;  // DIR/<model>/<version>
  int64_t version = 0;
};

struct VersionOutcome {
  OptimizeReport report;
  bool up_to_date = false;  // read back: nothing was made or written
  Status problem;           // not OK: a step failed (the report says which, where it could)
};

class VersionOptimizer {
 public:
  struct Options {
    std::string python = "/usr/bin/python3";
    std::string export_script;  // tools/optimize_export.py
    std::string script_digest;  // its SHA-256 (part of the stamp)
    int threads = 1;            // the export's torch threads
    bool force = false;         // make everything again, even when up to date
  };

  VersionOptimizer(Options options, backend::Backend* torch, backend::Backend* onnx)
      : options_(std::move(options)), torch_(torch), onnx_(onnx) {}

  // Not OK only when nothing can be reported: model.pt cannot be read.
  StatusOr<VersionOutcome> Run(const VersionJob& job) const;

 private:
  // The export, the ORT fusions and the int8 copy, as rows of the report.
  Status MakeCandidates(const VersionJob& job, OptimizeReport* report) const;
  // Runs the reference and every present ONNX candidate on the samples.
  Status Compare(const VersionJob& job, OptimizeReport* report) const;

  Options options_;
  backend::Backend* torch_;
  backend::Backend* onnx_;
};

}  // namespace inferd::optimize
