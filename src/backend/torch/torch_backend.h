// TorchBackend: loads TorchScript files (model.pt) into Models that run under
// libtorch, and sets up each executor thread's intra-op pool.
//
// This header includes no torch header, so the rest of the server can create
// a TorchBackend without paying libtorch's compile cost.
//
// Load: torch::jit::load, eval(), then torch::jit::freeze (on failure, e.g. a
// module that keeps Python-only attributes, the unfrozen module is used and a
// warning is logged), then the execution variant is chosen (verified and
// timed, execution_variants.h), then, for `precision: auto | bf16 | int8`, the precision
// (checked against fp32 on sample inputs, precision_choice.h; with auto, the
// ONNX files `inferd optimize` wrote are candidates too, loaded through
// LoadOptions::peers, and one of them may be served instead). Load never
// throws: a missing or unreadable file comes back as kInvalidArgument naming
// the path.
//
// Thread-safety: Load may be called from several loader threads at once.
// InitExecutorThread configures only the calling thread (OpenMP keeps one team
// per calling thread). Ownership: returned Models are shared; they hold their
// own module and outlive the backend if their owners keep them.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/executor_width.h"

// Namespace inferd::backend (not ...::torch, which would hide ::torch).
namespace inferd::backend {

class TorchBackend : public Backend {
 public:
  struct Options {
    // Verify and time the model's execution variants at load (frozen,
    // channels-last input, optimize_for_inference; execution_variants.h) as
    // its config's `variants:` asks, and serve the fastest correct one.
    // optimize_for_inference alone is no safe switch: on libtorch 1.13 it made
    // ResNet-18 faster and MobileNetV3-small wrong (issue 13).
    bool choose_variant = true;
    // Runs forward twice on zero inputs of batch 1 at load (-1 dims become 1), so that the first request does not pay the graph
    // executor's profiling and optimisation passes. A forward that throws on
    // zeros only logs; outputs that contradict the config fail the load.
    bool warm_up = true;
    // Pays libtorch's one-time costs at Create (runtime_warm_up.h), so that the
    // first model's measured footprint is its own.
    bool warm_up_runtime = true;
  };

  static StatusOr<std::unique_ptr<TorchBackend>> Create(const Options& options);
  static StatusOr<std::unique_ptr<TorchBackend>> Create() { return Create(Options()); }

  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  void InitExecutorThread(const std::vector<int>& cores, int num_threads) override;
  // Kept for the thread's next torch forward, which re-sizes and re-pins its
  // OpenMP team first (intra_op_pool.h: set_num_threads is per calling
  // thread with libgomp; a member the pool dropped or made anew is pinned
  // again). A thread that runs another runtime's model meanwhile keeps its
  // team as it was.
  void SetCallWidth(const std::vector<int>& cores, int num_threads) override;
  // Empties oneDNN's primitive cache (its capacity set to 0 and back): about
  // 0.23 MiB of heap and JIT code per small convnet ever run (docs/PERFORMANCE.md,
  // "Model cache").
  void ReleaseCaches() override;

 private:
  explicit TorchBackend(const Options& options) : options_(options) {}

  Options options_;
  ExecutorWidth width_;  // the widest executor (TorchModel::Options::executor_threads)
};

}  // namespace inferd::backend
