// The model files a version folder may hold, by kind: the one its backend
// serves (model.pt, model.onnx, ...) and the candidates `inferd optimize`
// writes beside model.pt (docs/OPTIMIZE.md). One table, so that the files the
// optimizer writes and the ones `GET /v2/models/{m}` lists cannot drift apart.
//
// Pure functions apart from ListVersionFiles, which reads a directory (a
// stat per known name; never throws). Any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend/model_file.h"

namespace inferd::repository {

// File names in a version folder (backend/model_file.h: the torch backend's
// precision choice loads the ONNX ones too).
using backend::kOnnxFile;
using backend::kOnnxInt8File;
using backend::kOnnxOptimizedFile;
using backend::kTorchscriptFile;
inline constexpr std::string_view kOptimizeReportFile = "optimize.json";  // what optimize measured

// "torchscript", "onnx", "onnx_optimized", "onnx_int8", "xgboost"; empty for
// a name that is not a model file.
std::string_view ModelFileKind(std::string_view file);

struct VersionFile {
  std::string file;  // the name inside the version folder
  std::string kind;  // ModelFileKind
  int64_t bytes = 0;
  bool served = false;  // the file the version's backend reads
};

// The model files present in `version_dir`, in the table's order;
// `served_file` (a name) is marked. Empty when the folder cannot be read.
std::vector<VersionFile> ListVersionFiles(const std::string& version_dir,
                                          std::string_view served_file);

}  // namespace inferd::repository
