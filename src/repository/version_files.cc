#include "repository/version_files.h"

#include <array>
#include <filesystem>
#include <utility>

namespace inferd::repository {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kKinds = {{
    {kTorchscriptFile, "torchscript"},
    {kOnnxFile, "onnx"},
    {kOnnxOptimizedFile, "onnx_optimized"},
    {kOnnxInt8File, "onnx_int8"},
    {"model.json", "xgboost"},
    {"model.ubj", "xgboost"},
}};

}  // namespace

std::string_view ModelFileKind(std::string_view file) {
  for (const auto& [name, kind] : kKinds) {
    if (name == file) return kind;
  }
  return {};
}

std::vector<VersionFile> ListVersionFiles(const std::string& version_dir,
                                          std::string_view served_file) {
  namespace fs = std::filesystem;
  std::vector<VersionFile> files;
  for (const auto& [name, kind] : kKinds) {
    const fs::path path = fs::path(version_dir) / name;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    const auto size = fs::file_size(path, ec);
    files.push_back({std::string(name), std::string(kind), ec ? 0 : static_cast<int64_t>(size),
                     name == served_file});
  }
  return files;
}

}  // namespace inferd::repository
