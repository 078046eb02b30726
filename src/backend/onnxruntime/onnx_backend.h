// OnnxBackend: loads ONNX graphs (`backend: onnxruntime`, <version>/model.onnx)
// through ONNX Runtime's C++ API (1.30, from the npm packages that
// scripts/setup.sh installs into third_party/onnxruntime, or ONNXRUNTIME_ROOT).
// Registered under `onnxruntime` (registry.h): fp32, no execution variants,
// batching across requests. Built only when CMake finds ONNX Runtime.
//
// Threads: one Ort::Env for the process; each session runs on the calling
// executor thread with as many intra-op threads as the widest executor of the
// core plan (InitExecutorThread tells; 1 before any did: then no extra thread
// at all, each executor's Run stays on its own pinned core). Spinning of idle
// intra-op threads is off (it would steal cycles from the other executors).
// LoadOptions::intra_op_threads, when set, replaces that width (the torch
// backend's guard times a candidate on one thread).
// Thread-safety: Load from any thread; InitExecutorThread from executor threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/executor_width.h"

namespace inferd::backend {

class OnnxBackend : public Backend {
 public:
  // `wide_calls` false: served models hold no second session (see SetCallWidth).
  static StatusOr<std::unique_ptr<OnnxBackend>> Create(bool wide_calls = true);

  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  void InitExecutorThread(const std::vector<int>& cores, int num_threads) override;
  // Served models hold a second session as wide as all executors' cores
  // (OnnxModel::Options::wide_threads); a widened thread's calls run on it.
  void SetCallWidth(const std::vector<int>& cores, int num_threads) override;
  // The graph after ONNX Runtime's extended fusions (onnx_graph_optimizer.h).
  Status WriteOptimizedModel(const std::string& in, const std::string& out) override;

 private:
  OnnxBackend() = default;

  std::shared_ptr<void> env_;  // Ort::Env, shared with the models (they may outlive the backend)
  ExecutorWidth width_;        // the widest executor: the threads of each model loaded
  bool wide_calls_ = true;
};

}  // namespace inferd::backend
