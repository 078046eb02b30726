// Execution variants of a TorchScript model, chosen by measurement and
// verified before one is served.
//
// Candidates: the frozen module (the reference, always valid),
// `channels_last` (the frozen module fed its 4-D float inputs in channels-last
// memory format, which lets oneDNN skip a layout reorder per convolution) and
// `optimize_for_inference` (torch::jit::optimize_for_inference on a separate
// frozen copy: convolutions and their neighbours converted to oneDNN ops with
// prepacked weights). Each candidate runs on the same seeded inputs at batch 1
// and batch 2 (when the model batches); its outputs must match the frozen
// module's within kMaxRelativeError of the largest reference output, and it
// must leave its inputs untouched (they are the request's bytes). Accepted
// candidates are timed (minimum of a few calls, in the calling thread's CPU
// time when the thread has one intra-op thread, so a busy machine does not
// decide); the fastest wins only when it is at least kMinGain faster than the
// frozen module. Every figure is logged and kept for the model's metadata.
//
// Cost at load: one extra frozen copy of the weights while
// optimize_for_inference is tried, and about a dozen forward calls.
// Thread-safety: ChooseVariant runs on the loading thread; the returned module
// is safe to call concurrently, as the frozen one is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/script.h>

#include "backend/backend.h"
#include "config/model_config.h"

namespace inferd::backend {

inline constexpr double kMaxRelativeError = 1e-3;
inline constexpr double kMinGain = 0.05;

struct ChosenVariant {
  ::torch::jit::Module module;  // what Execute runs
  bool channels_last = false;   // convert 4-D float inputs to channels-last first
  ExecutionReport report;
};

// Seeded inputs of `batch` items like the ones the model will see: a model
// with image pre-processing gets uniform pixels normalized by its mean/std;
// other floating inputs get standard normal values; other types zeros (token
// ids, masks). -1 dims as `variable_dim`. Empty when an input cannot be made
// (BYTES).
std::vector<at::Tensor> MakeInputs(const config::ModelConfig& config, int64_t batch,
                                   int64_t variable_dim = 1);

// The cost of one call in ms: the calling thread's CPU time when its
// intra-op pool is this one thread (the load is then irrelevant), else wall.
double TimeCallMs(const std::function<void()>& call);

// A frozen copy of `eval` in a compilation unit of its own (saved and loaded
// again): clone() and freeze() register their types in the module's unit, and
// a frozen graph holds the weights as constants, so a rejected candidate made
// by eval.clone() would keep two copies of the weights alive for as long as
// the served model (measured: +4.4 MiB on 2.1 MiB of weights). Its graph is
// its own: passes may change it.
::torch::jit::Module FrozenCopy(const ::torch::jit::Module& eval);

// `frozen` is the frozen module; `eval` the module before freezing (copies
// for other candidates are made from it). `mode`: "auto" tries every
// candidate; "frozen", "channels_last" or "optimize_for_inference" tries only
// that one (still verified: a candidate that fails falls back to frozen).
ChosenVariant ChooseVariant(const ::torch::jit::Module& eval, ::torch::jit::Module frozen,
                            const config::ModelConfig& config, const std::string& mode);

}  // namespace inferd::backend
