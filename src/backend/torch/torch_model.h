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
// precision bf16, int8 or auto: chosen and checked against fp32 at load
// (precision_choice.h). A bf16 module gets its floating inputs cast to bf16;
// its bf16 outputs are cast back to the config's datatype (FP32 when the
// config lists none). With auto, the ONNX files beside model.pt are
// candidates too (onnx_candidates.h, through LoadOptions::peers): when one of
// them wins, Load returns that backend's model wrapped as a ChosenModel
// (backend/chosen_model.h), and no TorchModel is made.
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
    // Intra-op threads of the widest executor: an ONNX Runtime candidate
    // chosen by precision auto is loaded again with them when more than one.
    int executor_threads = 1;
    // The cores of all executors: a lone request's width (Backend::SetCallWidth).
    // Above 1, a chosen ONNX Runtime candidate is loaded again too, with its
    // second session for lone requests.
    int all_cores = 1;
  };

  // A TorchModel, or the other runtime's model precision auto chose.
  static StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& load, const Options& options);

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;

  // With the precision chosen at load and every candidate measured (empty
  // `requested` for precision fp32).
  ExecutionReport execution_report() const override { return report_; }

  bool frozen() const { return frozen_; }
  // Parameters and buffers of the module as loaded (before freezing folds them).
  int64_t WeightBytes() const override { return weight_bytes_; }
  // Execute would run on the calling thread's OpenMP team as wide as the
  // scheduler set it (TorchBackend::SetCallWidth, applied at the forward),
  // but it is not offered: measured on the shared 2-core machine (load 12,
  // deberta_small fp32), a widened lone request ran 4.8x slower than on one
  // core (libgomp's team waits at every parallel region for a descheduled
  // member), where ONNX Runtime's non-spinning pool gained 1.9x.
  // docs/performance/text.md; to be measured again on a quiet machine.
  bool RunsWide() const override { return false; }

 private:
  TorchModel(::torch::jit::Module module, config::ModelConfig config, bool frozen,
             bool channels_last, bool bf16_inputs, ExecutionReport report,
             int64_t weight_bytes);

  StatusOr<std::vector<c10::IValue>> ToArguments(const std::vector<NamedTensor>& inputs) const;
  StatusOr<std::vector<NamedTensor>> FromResult(const c10::IValue& result) const;
  StatusOr<NamedTensor> ToOutput(std::string name, at::Tensor tensor,
                                 const config::TensorSpec* spec) const;
  // Runs forward twice on zero inputs of batch 1 (variable dims as 1). A
  // forward that throws is only logged; outputs that do not match the config
  // (count, names, datatypes) fail the load with kInvalidArgument.
  Status WarmUp();
  ::torch::jit::Module module_;  // forward() is safe to call concurrently
  const config::ModelConfig config_;
  const bool bf16_inputs_;  // floating inputs are cast to bf16 (precision bf16)
  const bool frozen_;
  const bool channels_last_;  // 4-D floating inputs go in as channels-last
  const ExecutionReport report_;  // with the precision report
  const int64_t weight_bytes_;
};

}  // namespace inferd::backend
