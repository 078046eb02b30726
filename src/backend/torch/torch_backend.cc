#include "backend/torch/torch_backend.h"

#include <oneapi/dnnl/dnnl.h>
#include <spdlog/spdlog.h>

#include "backend/registry.h"
#include "backend/torch/intra_op_pool.h"
#include "backend/torch/runtime_warm_up.h"
#include "backend/torch/torch_model.h"

namespace inferd::backend {
namespace {

Capabilities TorchCapabilities() {
  Capabilities c;
  c.model_files = {"model.pt"};
  c.precisions = {config::Precision::kFp32, config::Precision::kBf16, config::Precision::kInt8,
                  config::Precision::kAuto};
  c.variants = true;
  c.batching = true;
  return c;
}

StatusOr<std::unique_ptr<Backend>> CreateTorchBackend(const CreateOptions& create) {
  TorchBackend::Options options;
  options.warm_up = create.warm_up;
  ASSIGN_OR_RETURN(std::unique_ptr<TorchBackend> backend, TorchBackend::Create(options));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace

// The registration (registry.h); CMake keeps this object in every binary
// through this symbol.
extern "C" const bool inferd_backend_torchscript_registered =
    Registry::Register("torchscript", TorchCapabilities(), CreateTorchBackend);

StatusOr<std::unique_ptr<TorchBackend>> TorchBackend::Create(const Options& options) {
  // Inter-op parallelism would add threads outside the core plan.
  LimitInterOpThreads();
  if (options.warm_up_runtime) WarmUpRuntime();
  return std::unique_ptr<TorchBackend>(new TorchBackend(options));
}

StatusOr<std::shared_ptr<Model>> TorchBackend::Load(const LoadOptions& options) {
  TorchModel::Options model_options;
  model_options.choose_variant = options_.choose_variant;
  model_options.warm_up = options_.warm_up;
  model_options.executor_threads = width_.threads();
  model_options.all_cores = width_.all_cores();
  return TorchModel::Load(options, model_options);
}

void TorchBackend::InitExecutorThread(const std::vector<int>& cores, int num_threads) {
  width_.Note(cores, num_threads);
  Status status = ConfigureIntraOpPool(cores, num_threads);
  if (!status.ok()) spdlog::warn("torch: executor thread set-up: {}", status.message());
}

void TorchBackend::SetCallWidth(const std::vector<int>& cores, int num_threads) {
  RequestCallWidth(cores, num_threads);
}

void TorchBackend::ReleaseCaches() {
  // libtorch runs on the system's libdnnl.so.2, the one linked here.
  int capacity = 0;
  if (dnnl_get_primitive_cache_capacity(&capacity) != dnnl_success || capacity <= 0) return;
  if (dnnl_set_primitive_cache_capacity(0) != dnnl_success) return;
  if (dnnl_set_primitive_cache_capacity(capacity) != dnnl_success) {
    spdlog::warn("torch: oneDNN's primitive cache could not be given its capacity of {} back",
                 capacity);
  }
}

}  // namespace inferd::backend
