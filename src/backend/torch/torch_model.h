// TorchModel: one loaded TorchScript module version, shared by every executor
// that runs it (one copy of the weights).
//
// Inputs are passed to forward() positionally in ModelConfig::inputs order
// (looked up by name when a caller's order differs). forward() may return a
// tensor, a tuple or list of tensors (matched by position to
// ModelConfig::outputs) or a Dict[str, Tensor] (matched by name); with no
// outputs in the config they are named output0, output1, ... (dict keys for a
// dict). Output datatypes are checked against the config, at load time by a
// warm-up run on zero inputs and again on every call.
//
// precision bf16: forward() runs under CPU autocast to bf16 (matrix products
// and convolutions in bf16, precision-sensitive ops in fp32, weights folded in
// fp32 by freeze and cast per call); bf16 outputs are cast back to the
// config's datatype (FP32 when the config lists none). Chosen over converting
// the module to bf16: same speed on ResNet-18 (1.9x fp32), 2-3x smaller error
// on MobileNetV3 (conv-bn folding in bf16 loses precision).
//
// Thread-safety: Execute may be called concurrently from several threads; it
// runs under c10::InferenceMode and touches no mutable state of its own
// (libtorch's graph executor guards its own caches). This header includes
// torch: include it only from src/backend/torch/*.cc and its unit tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>

#include "backend/backend.h"

namespace inferd::backend {

class TorchModel : public Model {
 public:
  struct Options {
    // Verify and time the execution variants (execution_variants.h) as the
    // config's `variants:` asks; false: serve the frozen module untried.
    bool choose_variant = true;
    bool warm_up = true;
  };

  static StatusOr<std::shared_ptr<TorchModel>> Load(const LoadOptions& load,
                                                    const Options& options);

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;

  ExecutionReport execution_report() const override { return report_; }

  bool frozen() const { return frozen_; }
  // Parameters and buffers of the module as loaded (before freezing folds them).
  int64_t WeightBytes() const override { return weight_bytes_; }

 private:
  TorchModel(::torch::jit::Module module, config::ModelConfig config, bool frozen,
             bool channels_last, ExecutionReport report, int64_t weight_bytes);

  StatusOr<std::vector<c10::IValue>> ToArguments(const std::vector<NamedTensor>& inputs) const;
  StatusOr<std::vector<NamedTensor>> FromResult(const c10::IValue& result) const;
  StatusOr<NamedTensor> ToOutput(std::string name, at::Tensor tensor,
                                 const config::TensorSpec* spec) const;
  // Runs forward twice on zero inputs of batch 1 (variable dims as 1). A
  // forward that throws is only logged; outputs that do not match the config
  // (count, names, datatypes) fail the load with kInvalidArgument.
  Status WarmUp();
  // With precision bf16: runs a seeded random input with and without autocast
  // and logs the largest difference (relative to the largest fp32 output);
  // non-finite bf16 outputs where fp32 is finite fail the load.
  Status CheckBf16AgainstFp32();

  ::torch::jit::Module module_;  // forward() is safe to call concurrently
  const config::ModelConfig config_;
  const bool bf16_;
  const bool frozen_;
  const bool channels_last_;  // 4-D floating inputs go in as channels-last
  const ExecutionReport report_;
  const int64_t weight_bytes_;
};

}  // namespace inferd::backend
