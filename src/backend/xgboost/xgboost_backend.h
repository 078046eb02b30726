// XGBoostBackend: loads XGBoost models (`backend: xgboost`,
// <version>/model.json or model.ubj) through XGBoost's C API (Debian's
// libxgboost-dev 1.7). Registered under `xgboost` (registry.h): fp32 only, no
// execution variants, batching across requests.
//
// Threads: each prediction runs on the calling executor thread with as many
// OpenMP threads as the widest executor of the core plan (InitExecutorThread
// tells; 1 before any executor did). XGBoost and libtorch share libgomp, so a
// prediction reuses the executor's pinned team: no threads beyond the plan.
// Thread-safety: Load from any thread; InitExecutorThread from executor
// threads. Models outlive the backend if their owners keep them.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/executor_width.h"

namespace inferd::backend {

class XGBoostBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<XGBoostBackend>> Create();

  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  void InitExecutorThread(const std::vector<int>& cores, int num_threads) override;

 private:
  XGBoostBackend() = default;

  ExecutorWidth width_;  // the widest executor: the threads of each model loaded
};

}  // namespace inferd::backend
