#include "backend/torch/onnx_candidates.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "backend/model_file.h"
#include "backend/registry.h"

namespace inferd::backend {
namespace {

constexpr const char* kOnnxRuntime = "onnxruntime";

LoadOptions CandidateLoad(const LoadOptions& load, const std::string& path, int threads) {
  LoadOptions o;
  o.model_path = path;
  o.config = load.config;
  o.config.backend = config::BackendKind::kOnnxruntime;
  o.config.precision = config::Precision::kFp32;  // the file is what it is
  o.peers = load.peers;
  o.intra_op_threads = threads;
  return o;
}

}  // namespace

std::vector<RuntimeCandidate> LoadOnnxCandidates(const LoadOptions& load) {
  std::vector<RuntimeCandidate> out;
  if (load.config.precision != config::Precision::kAuto || load.peers == nullptr) return out;
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(load.model_path).parent_path();
  std::error_code ec;
  const auto present = [&](std::string_view name) {
    return fs::is_regular_file(dir / std::string(name), ec);
  };
  std::vector<RuntimeCandidate> wanted;
  if (present(kOnnxOptimizedFile)) {
    wanted.push_back({kOnnxRuntime, "fp32", std::string(kOnnxOptimizedFile), "", nullptr, ""});
  } else if (present(kOnnxFile)) {
    wanted.push_back({kOnnxRuntime, "fp32", std::string(kOnnxFile), "", nullptr, ""});
  }
  if (present(kOnnxInt8File)) {
    wanted.push_back({kOnnxRuntime, "int8", std::string(kOnnxInt8File), "", nullptr, ""});
  }
  if (wanted.empty()) return out;
  if (Registry::Find(kOnnxRuntime) == nullptr) {
    spdlog::info(
        "model '{}': precision auto leaves {} ONNX file(s) aside: this binary has no "
        "onnxruntime backend (docs/CONFIG.md)",
        load.config.name, wanted.size());
    return out;
  }
  for (RuntimeCandidate& c : wanted) {
    c.path = (dir / c.file).string();
    StatusOr<std::shared_ptr<Model>> model = load.peers->Load(CandidateLoad(load, c.path, 1));
    if (model.ok()) {
      c.model = std::move(model).value();
    } else {
      c.error = model.status().message();
    }
    out.push_back(std::move(c));
  }
  return out;
}

StatusOr<std::shared_ptr<Model>> ServeCandidate(const LoadOptions& load, RuntimeCandidate chosen,
                                                int executor_threads) {
  if (executor_threads <= 1 || load.peers == nullptr) return std::move(chosen.model);
  chosen.model.reset();  // the one-thread copy goes before the served one loads
  return load.peers->Load(CandidateLoad(load, chosen.path, 0));
}

}  // namespace inferd::backend
