// The names of a version folder's model files (the one table:
// repository/version_files.h gives them kinds), and ModelFileBytes: the size
// of a version's model file, or the error a load answers when there is none.
// Shared by the backends' Load.
// A free function; any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "backend/backend.h"
#include "common/status.h"

namespace inferd::backend {

inline constexpr std::string_view kTorchscriptFile = "model.pt";
inline constexpr std::string_view kOnnxFile = "model.onnx";               // the ONNX export
inline constexpr std::string_view kOnnxOptimizedFile = "model.opt.onnx";  // after ORT's fusions
inline constexpr std::string_view kOnnxInt8File = "model.int8.onnx";      // int8 weights, dynamic

// kInvalidArgument "model 'm': model file '<path>' does not exist or is not a
// file"; else its size in bytes (0 when the size cannot be read).
StatusOr<int64_t> ModelFileBytes(const LoadOptions& load);

}  // namespace inferd::backend
