#include "backend/onnxruntime/onnx_graph_optimizer.h"

#include <onnxruntime_cxx_api.h>

#include <filesystem>

namespace inferd::backend {

Status WriteOptimizedOnnxGraph(const std::shared_ptr<void>& env, const std::string& in,
                               const std::string& out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(in, ec)) {
    return InvalidArgument("'" + in + "' does not exist or is not a file");
  }
  try {
    Ort::SessionOptions so;
    so.SetIntraOpNumThreads(1);
    so.SetInterOpNumThreads(1);
    so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_EXTENDED);
    so.SetOptimizedModelFilePath(out.c_str());
    // The session exists to write the file; nothing runs on it.
    Ort::Session session(*static_cast<Ort::Env*>(env.get()), in.c_str(), so);
  } catch (const Ort::Exception& e) {
    return InvalidArgument("ONNX Runtime could not optimize '" + in + "' into '" + out +
                           "': " + e.what());
  }
  if (!std::filesystem::is_regular_file(out, ec)) {
    return InvalidArgument("ONNX Runtime optimized '" + in + "' but wrote no '" + out + "'");
  }
  return Status::Ok();
}

}  // namespace inferd::backend
