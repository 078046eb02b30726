// OnnxModel: one ONNX graph (<version>/model.onnx) in one ONNX Runtime
// session, shared by every executor that runs it (one copy of the weights).
//
// Inputs and outputs are matched by their names in the graph: every graph
// input must be one of the config's `inputs` (same datatype), every config
// output one of the graph's outputs; with no `outputs` in the config, the
// graph's outputs come back in graph order as output0, output1, ... (the
// Backend contract). Inputs are handed to the session without a copy; the
// outputs are returned as tensors that keep their session-owned buffers.
// At load a run on zero inputs of batch 1 (-1 dims as 1) checks that the
// outputs have the config's datatypes.
//
// Thread-safety: Execute may be called concurrently from several threads
// (OrtSession::Run is thread-safe). Each call runs on the calling executor
// thread, plus the session's intra-op threads when it has more than one.
// An ONNX Runtime session's pool has a fixed size, so a model that may run a
// lone request on every core (Options::wide_threads) holds a second session
// with that pool, used by calls whose thread was widened to it
// (call_width.h); the two share the prepacked weights (one copy of what the
// kernels read; each keeps its own graph and the initializers not prepacked).
// This header includes no ONNX Runtime header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace inferd::backend {

class OnnxModel : public Model {
 public:
  struct Options {
    int threads = 1;  // intra-op threads of the session (the calling thread counts as one)
    // Intra-op threads of the second session, for lone requests; no second
    // session when not above `threads`.
    int wide_threads = 0;
    std::shared_ptr<void> env;  // the backend's Ort::Env, kept alive by the model
  };

  // kInvalidArgument naming the file or the config key when the file is not
  // a readable ONNX graph or the config does not match the graph.
  static StatusOr<std::shared_ptr<OnnxModel>> Load(const LoadOptions& load, const Options& options);
  ~OnnxModel() override;

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;
  int64_t WeightBytes() const override { return file_bytes_; }
  bool RunsWide() const override;

 private:
  struct Graph;  // the session and the name tables (onnx_model.cc)
  OnnxModel(std::unique_ptr<Graph> graph, config::ModelConfig config, int64_t file_bytes);

  std::unique_ptr<Graph> graph_;
  const config::ModelConfig config_;
  const int64_t file_bytes_;  // the weights are stored in the file
};

}  // namespace inferd::backend
