// The precision (and runtime) a TorchScript model is served in, chosen at
// load under an accuracy guard (config `precision:`).
//
//   fp32   the module as the execution variants chose it; nothing checked.
//   bf16   the frozen module with its weights in bf16 (precision_passes.h).
//   int8   the frozen module with its linear layers dynamically quantized.
//   auto   torch fp32, plus each reduced precision this CPU runs natively
//          (bf16 with AVX512_BF16 or AMX; int8 with VNNI and oneDNN's
//          quantized engine, and only for models whose 2-D weights (linear
//          layers) hold at least kInt8MinLinearShare of the weights: in a CNN
//          int8 would touch the classifier head alone; int8 is built,
//          checked, timed and shown, but auto serves it only if
//          kAutoServesInt8), plus the ONNX files `inferd optimize` wrote
//          beside model.pt, run by the onnxruntime backend (onnx_candidates.h:
//          fp32 from model.opt.onnx or model.onnx, int8 from model.int8.onnx).
//
// The guard. Every candidate runs every sample: the files of a `samples/`
// folder beside the model's versions (DIR/<model>/samples/*.pt, written by
// torch.save: a tensor for a one-input model, a list in input order or a dict
// by input name; each tensor one item (the config's dims) or a batch of items
// with a leading dim), else inputs drawn for the declared shapes and dtypes
// (execution_variants.h's MakeInputs; integer inputs that feed an embedding
// get ids drawn within its rows, other integer inputs ones). A candidate that
// throws, gives a non-finite output where torch fp32 does not, differs from
// torch fp32 by more than the tolerance (max |out - fp32| over max |fp32|,
// per output; the config's precision_tolerance, else kBf16Tolerance,
// kInt8Tolerance, or kFp32Tolerance for another runtime's fp32), or changes
// the top-1 class of a classifier output ([batch, classes]) on a sample whose
// fp32 top-2 margin exceeds the tolerance of the largest output is refused.
// Kept candidates are timed on inputs they have not run (in thread CPU time
// on a one-thread pool; an ONNX Runtime candidate runs one intra-op thread,
// on the loading thread) one item alone and per item in a batch of the
// served batch size (runtime_choice.h's ServedBatch, at most the samples'
// batch); auto serves what runtime_choice.h's rule picks. An explicit bf16
// or int8 that is refused fails the load (kFailedPrecondition, with the
// measurement), so a model is never ready and then failing every request.
//
// Cost at load: one frozen copy per torch candidate built, one session per
// ONNX file, and each candidate runs the samples twice over. A torch
// candidate auto may not serve is released once timed; every loser is
// released before ChoosePrecision returns.
// Thread-safety: ChoosePrecision runs on the loading thread; the returned
// module is safe to call concurrently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/script.h>

#include "backend/backend.h"
#include "backend/precision_report.h"
#include "backend/torch/onnx_candidates.h"
#include "common/status.h"
#include "config/model_config.h"

namespace inferd::backend {

inline constexpr double kBf16Tolerance = 1e-2;
inline constexpr double kInt8Tolerance = 5e-2;
// Another runtime's fp32 may differ from libtorch's by rounding only (the
// execution variants' kMaxRelativeError): more is an export gone wrong.
inline constexpr double kFp32Tolerance = 1e-3;
inline constexpr double kInt8MinLinearShare = 0.25;
// Whether auto may serve int8 when it wins the guard's timing. Not with this
// libtorch (1.13, no fbgemm): its dynamic int8 linear on oneDNN bakes each
// call's activation scale into the primitives it creates, so every request
// of real traffic JIT-compiles new kernels (mprotect, TLB shootdowns on every
// core) while the guard's few timed calls cannot show what that costs the
// other executors. Measured side by side on varied inputs: a 4 x 256 DeBERTa-
// style encoder served 0.60x fp32's req/s, nn.TransformerEncoder 0.89x, where
// the guard timed 1.46x and 2.29x per item (docs/PRECISION.md). auto still
// builds, checks and times int8 and shows it; `precision: int8` serves it.
inline constexpr bool kAutoServesInt8 = false;
inline constexpr int kDrawnSamples = 8;
// Drawn for a model whose fp32 forward takes more than kSlowMsPerItem an item
// (as the execution variants timed it): ResNet-50's load doubled otherwise.
inline constexpr int kDrawnSamplesSlow = 4;
inline constexpr double kSlowMsPerItem = 20;

// A module as Execute runs it, with the conversions its inputs need.
struct PrecisionModule {
  ::torch::jit::Module module;
  bool channels_last = false;  // 4-D floating inputs go in channels-last
  bool bf16_inputs = false;    // floating inputs are cast to bf16 first
};

struct ChosenPrecision {
  PrecisionModule served;  // the torch module served, unless `other` is set
  std::optional<RuntimeCandidate> other;  // the other runtime's candidate chosen
  PrecisionReport report;
};

// The inputs one forward() gets: floating ones cast to bf16 and 4-D floating
// ones made channels-last, as `m` asks.
std::vector<c10::IValue> PrecisionArguments(const PrecisionModule& m,
                                            std::vector<at::Tensor> inputs);

// `eval`: the module before freezing (candidates are frozen copies of it);
// `fp32`: the module served at fp32, the reference; `model_dir`: DIR/<model>;
// `fp32_ms_per_item`: its cost as the variants timed it (0: unknown);
// `others`: other runtimes' candidates (auto only; consumed: the losers are
// released); `calibrated_batch`: LoadOptions::served_batch.
// kInvalidArgument for unreadable or malformed samples; kFailedPrecondition
// when an explicit bf16 or int8 is refused.
StatusOr<ChosenPrecision> ChoosePrecision(const ::torch::jit::Module& eval,
                                          const PrecisionModule& fp32,
                                          const config::ModelConfig& config,
                                          const std::string& model_dir, double fp32_ms_per_item,
                                          std::vector<RuntimeCandidate> others = {},
                                          int calibrated_batch = 0);

}  // namespace inferd::backend
