#include "backend/onnxruntime/onnx_backend.h"

#include <onnxruntime_cxx_api.h>

#include <algorithm>

#include "backend/onnxruntime/call_width.h"
#include "backend/onnxruntime/onnx_graph_optimizer.h"
#include "backend/onnxruntime/onnx_model.h"
#include "backend/registry.h"

namespace inferd::backend {
namespace {

Capabilities OnnxCapabilities() {
  Capabilities c;
  c.model_files = {"model.onnx"};
  c.precisions = {config::Precision::kFp32};
  c.variants = false;
  c.batching = true;
  return c;
}

StatusOr<std::unique_ptr<Backend>> CreateOnnxBackend(const CreateOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<OnnxBackend> backend, OnnxBackend::Create(options.wide_calls));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace

// The registration (registry.h); CMake keeps this object in every binary
// through this symbol.
extern "C" const bool inferd_backend_onnxruntime_registered =
    Registry::Register("onnxruntime", OnnxCapabilities(), CreateOnnxBackend);

StatusOr<std::unique_ptr<OnnxBackend>> OnnxBackend::Create(bool wide_calls) {
  std::unique_ptr<OnnxBackend> backend(new OnnxBackend());
  backend->wide_calls_ = wide_calls;
  try {
    // Global thread pools would be shared by every session: the per-session
    // pools (of one thread, the caller's, by default) keep executors apart.
    backend->env_ = std::make_shared<Ort::Env>(ORT_LOGGING_LEVEL_WARNING, "inferd");
  } catch (const Ort::Exception& e) {
    return Internal(std::string("ONNX Runtime did not start: ") + e.what());
  }
  return backend;
}

StatusOr<std::shared_ptr<Model>> OnnxBackend::Load(const LoadOptions& options) {
  OnnxModel::Options model_options;
  model_options.threads =
      options.intra_op_threads > 0 ? options.intra_op_threads : width_.threads();
  // A load that names its threads (the guard's timing copies) needs no
  // second session; a served one may run a lone request on every core.
  model_options.wide_threads =
      options.intra_op_threads > 0 || !wide_calls_ ? 0 : width_.all_cores();
  model_options.env = env_;
  ASSIGN_OR_RETURN(std::shared_ptr<OnnxModel> model, OnnxModel::Load(options, model_options));
  return std::shared_ptr<Model>(std::move(model));
}

void OnnxBackend::InitExecutorThread(const std::vector<int>& cores, int num_threads) {
  width_.Note(cores, num_threads);
}

void OnnxBackend::SetCallWidth(const std::vector<int>& cores, int num_threads) {
  CallThreads() = cores.empty() ? std::max(num_threads, 1) : static_cast<int>(cores.size());
}

Status OnnxBackend::WriteOptimizedModel(const std::string& in, const std::string& out) {
  return WriteOptimizedOnnxGraph(env_, in, out);
}

}  // namespace inferd::backend
