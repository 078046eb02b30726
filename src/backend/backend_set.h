// BackendSet: one instance of every backend in the Registry, itself a Backend
// whose Load picks by the model's `backend:` (config.backend). The server,
// the profiler and the topology calibration hand it to the scheduler and the
// repository, which then serve TorchScript, ONNX and XGBoost models side by
// side without knowing any of them.
//
// Every registered backend is created at Create (so that each executor
// thread's InitExecutorThread reaches all of them before any model loads);
// one that fails to start fails Create.
// Thread-safety: as Backend's contract; the set is fixed after Create.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/registry.h"

namespace inferd::backend {

class BackendSet : public Backend {
 public:
  struct Options {
    CreateOptions create;
  };

  static StatusOr<std::unique_ptr<BackendSet>> Create(const Options& options);
  static StatusOr<std::unique_ptr<BackendSet>> Create() { return Create(Options()); }

  // kInvalidArgument when the model's backend is not built into this binary.
  // The backend gets this set as LoadOptions::peers (unless the caller set
  // one), through which it may load candidate files with the others.
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  // Each backend sets up the calling thread its own way (libtorch's OpenMP
  // team; the others their thread counts).
  void InitExecutorThread(const std::vector<int>& cores, int num_threads) override;
  // Each backend widens the calling thread its own way.
  void SetCallWidth(const std::vector<int>& cores, int num_threads) override;
  void ReleaseCaches() override;

 private:
  BackendSet() = default;

  std::map<std::string, std::unique_ptr<Backend>> backends_;  // by registered name
};

}  // namespace inferd::backend
