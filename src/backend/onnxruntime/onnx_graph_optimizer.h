// WriteOptimizedOnnxGraph: the ahead-of-time half of `inferd optimize`
// (docs/OPTIMIZE.md): ONNX Runtime loads an ONNX file, runs its graph
// optimizer and saves the result (SessionOptions' optimized model file path).
//
// Level: ORT_ENABLE_EXTENDED, which holds the fusions that matter for
// transformers and quantized products (GELU / BiasGelu, FusedMatMul, the
// attention and LayerNorm patterns ONNX Runtime's C++ optimizer knows,
// MatMulIntegerToFloat, DynamicQuantizeMatMul) and only those:
// ORT_ENABLE_ALL adds layout transformations (NCHWc) for this CPU, which
// ONNX Runtime warns make a saved file machine-specific. A server loading the
// saved file still applies ORT_ENABLE_ALL on top (onnx_model.cc).
//
// A free function; any thread. The header includes no ONNX Runtime header.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace inferd::backend {

// `env` is the backend's Ort::Env. kInvalidArgument naming the file when
// ONNX Runtime cannot load `in` or write `out`.
Status WriteOptimizedOnnxGraph(const std::shared_ptr<void>& env, const std::string& in,
                               const std::string& out);

}  // namespace inferd::backend
