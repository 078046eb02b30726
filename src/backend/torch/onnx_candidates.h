// The ONNX files `inferd optimize` wrote beside a version's model.pt
// (docs/OPTIMIZE.md), loaded through the onnxruntime backend so that
// `precision: auto` can measure them under its accuracy guard beside the torch
// candidates (precision_choice.h) and serve one of them instead.
//
//   onnxruntime fp32  model.opt.onnx (the graph after ONNX Runtime's fusions),
//                     else model.onnx
//   onnxruntime int8  model.int8.onnx
//
// Each is loaded through LoadOptions::peers (the BackendSet) with the config's
// inputs and outputs and one intra-op thread: the guard times every candidate
// on the loading thread alone, as it times libtorch's. A file that does not
// load is a candidate "not built" with the reason, never a failed load.
//
// No torch header: the candidates are other backends' Models.
// Thread-safety: free functions; the loading thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"

namespace inferd::backend {

struct RuntimeCandidate {
  std::string runtime;           // "onnxruntime"
  std::string precision;         // "fp32" | "int8"
  std::string file;              // the name in the version folder
  std::string path;              // the file's path
  std::shared_ptr<Model> model;  // null when it did not load
  std::string error;             // why it did not load
};

// The candidates present in load.model_path's folder. Empty when the config's
// precision is not auto, no peers were given or the binary has no onnxruntime
// backend (logged once per load).
std::vector<RuntimeCandidate> LoadOnnxCandidates(const LoadOptions& load);

// The chosen candidate as it is served: its measured model when executors
// run one intra-op thread and a lone request can have no more than one core
// (`executor_threads` <= 1: the caller passes the larger), else the file loaded
// again with the backend's own width, after the measured copy is released
// (one copy of the weights).
StatusOr<std::shared_ptr<Model>> ServeCandidate(const LoadOptions& load, RuntimeCandidate chosen,
                                                int executor_threads);

}  // namespace inferd::backend
