#include "backend/xgboost/xgboost_backend.h"

#include "backend/registry.h"
#include "backend/xgboost/xgboost_model.h"

namespace inferd::backend {
namespace {

Capabilities XGBoostCapabilities() {
  Capabilities c;
  c.model_files = {"model.json", "model.ubj"};
  c.precisions = {config::Precision::kFp32};
  c.variants = false;
  c.batching = true;
  return c;
}

StatusOr<std::unique_ptr<Backend>> CreateXGBoostBackend(const CreateOptions&) {
  ASSIGN_OR_RETURN(std::unique_ptr<XGBoostBackend> backend, XGBoostBackend::Create());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace

// The registration (registry.h); CMake keeps this object in every binary
// through this symbol.
extern "C" const bool inferd_backend_xgboost_registered =
    Registry::Register("xgboost", XGBoostCapabilities(), CreateXGBoostBackend);

StatusOr<std::unique_ptr<XGBoostBackend>> XGBoostBackend::Create() {
  return std::unique_ptr<XGBoostBackend>(new XGBoostBackend());
}

StatusOr<std::shared_ptr<Model>> XGBoostBackend::Load(const LoadOptions& options) {
  XGBoostModel::Options model_options;
  model_options.threads = width_.threads();
  ASSIGN_OR_RETURN(std::shared_ptr<XGBoostModel> model, XGBoostModel::Load(options, model_options));
  return std::shared_ptr<Model>(std::move(model));
}

void XGBoostBackend::InitExecutorThread(const std::vector<int>& cores, int num_threads) {
  width_.Note(cores, num_threads);
}

}  // namespace inferd::backend
