// The Python half of `inferd optimize`: tools/optimize_export.py, run with
// Debian's python3 (python3-torch exports to ONNX, python3-onnx writes the
// int8 copy). Never on the request path: only `inferd optimize` runs it.
//
// ExportSpec is what the script learns of the config (the tensors as inferd
// parsed them, so there is one config parser); RunExportScript starts the
// script, waits for it and reads the result file it writes. The script's
// stdout and stderr go to a log file whose tail comes back in the error when
// the script fails as a whole (a failed export is a result, not an error).
// Blocking; any thread.
#pragma once

#include <string>

#include "common/status.h"
#include "config/model_config.h"

namespace inferd::optimize {

// The --spec JSON: {"inputs": [{"name", "datatype", "dims"}], "outputs": [names],
// "text": bool, "variable_dim": N}.
std::string ExportSpecJson(const config::ModelConfig& config);

struct ExportRequest {
  std::string python = "/usr/bin/python3";
  std::string script;    // tools/optimize_export.py
  std::string model_pt;  // read only
  std::string spec_json;
  std::string onnx_out;  // where the export goes (the caller renames it into place)
  std::string int8_out;  // where the int8 copy goes; empty: not made
  std::string result;    // the script's result file
  std::string log;       // its stdout and stderr
  int threads = 1;
};

struct ExportResult {
  bool onnx_ok = false;
  std::string onnx_reason;  // why not
  int opset = 0;
  bool int8_ok = false;
  std::string int8_reason;  // why not
  int quantized = 0;        // MatMul/Gemm rewritten to int8
  int left = 0;             // products left in fp32 (Conv, computed weights)
  std::string int8_scheme;  // "per-column" | "per-tensor"
  std::string int8_notes;   // what was left, e.g. "2 Conv (stays fp32)"
};

// kFailedPrecondition when python or the script cannot be started, kInternal
// with the log's tail when the script fails or writes no result.
StatusOr<ExportResult> RunExportScript(const ExportRequest& request);

}  // namespace inferd::optimize
