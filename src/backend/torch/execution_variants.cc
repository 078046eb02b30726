#include "backend/torch/execution_variants.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>

#include "backend/torch/tensor_conversion.h"
#include "common/cpu_time.h"

namespace inferd::backend {
namespace {

constexpr int kVariantTimedCalls = 3;
// Batch 1 forwards slower than this are timed at batch 1 and twice only (a
// heavy model pays seconds per variant otherwise).
constexpr double kCheapForwardMs = 20;
// The variant trials of one load stay within this (issue 38): a model whose
// forward takes 2.5 s paid 50 s of trials before. The first forward's time
// (the reference, at batch 1) predicts the rest: about 4 + 7 forwards per
// variant; past the budget none is tried, and a trial that would start past
// it is skipped. Either is said in the log and the model's metadata. 15 s,
// not 5: ResNet-50's cold first forward (334 ms on a 2-core Xeon) projected
// 6 s, so a 5 s budget served it frozen at 2.4x the CPU per request of the
// optimize_for_inference variant its trials (4.3 s) would have chosen.
constexpr double kVariantBudgetMs = 15000;

struct Candidate {
  std::string name;
  std::function<std::optional<::torch::jit::Module>()> build;  // nullopt: not applicable
  bool channels_last = false;
};

std::vector<at::Tensor> Forward(::torch::jit::Module& module, const std::vector<at::Tensor>& inputs,
                                bool channels_last) {
  c10::InferenceMode inference_mode;
  std::vector<c10::IValue> args;
  for (const at::Tensor& t : inputs) {
    args.emplace_back(channels_last && t.dim() == 4 && at::isFloatingType(t.scalar_type())
                          ? t.contiguous(at::MemoryFormat::ChannelsLast)
                          : t);
  }
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : FlattenTensors(module.forward(std::move(args)))) {
    out.push_back(t.contiguous());
  }
  return out;
}

// max |a - b| over max |b| across the floating outputs; infinity when the
// outputs differ in count, shape or finiteness.
double RelativeError(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& ref) {
  if (got.size() != ref.size()) return INFINITY;
  double diff = 0, scale = 1e-12;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].sizes().equals(ref[i].sizes())) return INFINITY;
    if (!at::isFloatingType(ref[i].scalar_type())) {
      if (!got[i].equal(ref[i])) return INFINITY;
      continue;
    }
    at::Tensor a = got[i].to(at::kDouble), b = ref[i].to(at::kDouble);
    if (!a.isfinite().all().item<bool>() && b.isfinite().all().item<bool>()) return INFINITY;
    diff = std::max(diff, (a - b).abs().max().item<double>());
    scale = std::max(scale, b.abs().max().item<double>());
  }
  return diff / scale;
}

std::string Percent(double gain) { return std::to_string(static_cast<int>(gain * 100)) + "%"; }

}  // namespace

std::vector<at::Tensor> MakeInputs(const config::ModelConfig& config, int64_t batch,
                                   int64_t variable_dim) {
  std::vector<at::Tensor> inputs;
  auto generator = at::detail::createCPUGenerator(/*seed_in=*/20261201 + batch);
  const auto& pre = config.preprocess;
  for (const config::TensorSpec& spec : config.inputs) {
    const auto dtype = ToTorchDtype(spec.dtype);
    if (!dtype) return {};
    std::vector<int64_t> shape{batch};
    // A text model is timed at a length it serves (64 tokens within
    // max_length) unless the caller asks for another.
    const int64_t variable =
        pre.kind == config::PreprocessKind::kText && variable_dim == 1 ? std::min<int64_t>(64, pre.max_length) : variable_dim;
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? variable : d);
    const auto options = at::TensorOptions().dtype(*dtype);
    if (!at::isFloatingType(*dtype)) {
      // Token ids and masks: ones for a text model (a mask of zeros leaves
      // attention nothing to attend to), zeros otherwise.
      inputs.push_back(pre.kind == config::PreprocessKind::kText ? at::ones(shape, options) : at::zeros(shape, options));
      continue;
    }
    const int64_t channels = shape.size() == 4 ? shape[1] : 0;
    if (pre.kind == config::PreprocessKind::kImage && static_cast<int64_t>(pre.mean.size()) == channels &&
        static_cast<int64_t>(pre.std.size()) == channels) {
      at::Tensor mean = at::tensor(pre.mean).view({1, channels, 1, 1});
      at::Tensor std = at::tensor(pre.std).view({1, channels, 1, 1});
      inputs.push_back(((at::rand(shape, generator) - mean) / std).to(*dtype));
    } else {
      inputs.push_back(at::randn(shape, generator, options));
    }
  }
  return inputs;
}

double TimeCallMs(const std::function<void()>& call) {
  const bool one_thread = at::get_num_threads() == 1;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  call();
  if (one_thread) return (ThreadCpuSeconds() - cpu0) * 1e3;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0)
      .count();
}

::torch::jit::Module FrozenCopy(const ::torch::jit::Module& eval) {
  std::stringstream bytes;
  eval.save(bytes);
  ::torch::jit::Module own = ::torch::jit::load(bytes, at::Device(at::kCPU));
  own.eval();
  return ::torch::jit::freeze(own);
}

ChosenVariant ChooseVariant(const ::torch::jit::Module& eval, ::torch::jit::Module frozen,
                            const config::ModelConfig& config, const std::string& mode) {
  ChosenVariant chosen{frozen, false, {"frozen", {}, {}, {}}};
  const std::string& name = config.name;
  std::vector<at::Tensor> one = MakeInputs(config, 1);
  const bool batches = config.max_batch_size > 1;
  bool has_image_input = false;
  for (const at::Tensor& t : one) {
    has_image_input |= t.dim() == 4 && at::isFloatingType(t.scalar_type());
  }
  std::vector<Candidate> candidates = {
      {"frozen", [&] { return std::optional(frozen); }, false},
      {"channels_last",
       [&]() -> std::optional<::torch::jit::Module> {
         if (!has_image_input) return std::nullopt;
         return frozen;
       },
       true},
      {"optimize_for_inference",
       [&]() -> std::optional<::torch::jit::Module> {
         // A copy in a compilation unit of its own (FrozenCopy).
         ::torch::jit::Module copy = FrozenCopy(eval);
         return ::torch::jit::optimize_for_inference(copy);
       },
       false},
  };
  auto skip_all = [&](const std::string& why) {
    for (const Candidate& c : candidates) {
      chosen.report.trials.push_back({c.name, false, c.name == "frozen", 0, 0, why});
    }
    spdlog::info("model '{}': serving the frozen module ({})", name, why);
    return chosen;
  };
  if (mode == "frozen") return skip_all("variants: frozen in config.yaml");
  if (config.precision != config::Precision::kFp32 && config.precision != config::Precision::kAuto) {
    return skip_all("variants are tried for fp32 models only");
  }
  if (one.empty() || config.inputs.empty()) {
    return skip_all("inputs that cannot be generated (BYTES, or none listed)");
  }

  // The frozen module's outputs are the reference, at batch 1, 2 and the
  // timed size; its batch-1 time decides the timed size.
  std::vector<at::Tensor> two = batches ? MakeInputs(config, 2) : std::vector<at::Tensor>{};
  std::vector<at::Tensor> ref_one, ref_two, ref_timed, timed_inputs;
  int64_t timed_batch = 1;
  bool cheap = true;
  const auto trials_start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                     trials_start)
        .count();
  };
  try {
    const double first_ms = TimeCallMs([&] { ref_one = Forward(frozen, one, false); });
    const double projected_ms = first_ms * (4 + 7 * static_cast<double>(candidates.size() - 1));
    if (projected_ms > kVariantBudgetMs && mode == "auto") {
      char why[200];
      std::snprintf(why, sizeof why,
                    "variants not tried: a forward took %.0f ms, trying them would take about "
                    "%.1f s, past the load-time budget of %.0f s",
                    first_ms, projected_ms / 1e3, kVariantBudgetMs / 1e3);
      chosen.report.skipped = why;
      return skip_all(why);
    }
    if (batches) ref_two = Forward(frozen, two, false);
    Forward(frozen, one, false);  // the graph executor's profiling runs are behind us
    const double frozen_ms_b1 = TimeCallMs([&] { Forward(frozen, one, false); });
    cheap = frozen_ms_b1 < kCheapForwardMs;
    if (batches && cheap) timed_batch = std::min(config.max_batch_size, 4);
    timed_inputs = timed_batch == 1 ? one : MakeInputs(config, timed_batch);
    ref_timed = Forward(frozen, timed_inputs, false);
  } catch (const std::exception& e) {
    return skip_all("the frozen module fails on generated inputs");
  }
  std::vector<at::Tensor> originals;
  for (const at::Tensor& t : one) originals.push_back(t.clone());

  struct Accepted {
    size_t index;
    ::torch::jit::Module module;
    double ms_per_item;
  };
  std::vector<Accepted> accepted;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const bool is_reference = c.name == "frozen";
    ExecutionVariantTrial trial{c.name, false, false, 0, 0, ""};
    if (mode != "auto" && c.name != mode && !is_reference) {
      trial.note = "not requested (variants: " + mode + ")";
      chosen.report.trials.push_back(trial);
      continue;
    }
    if (!is_reference && mode == "auto" && elapsed_ms() > kVariantBudgetMs) {
      trial.note = "skipped: the variant trials passed the load-time budget of " +
                   std::to_string(static_cast<int>(kVariantBudgetMs / 1e3)) + " s";
      chosen.report.skipped += (chosen.report.skipped.empty() ? "" : "; ") + c.name + " " +
                               trial.note;
      chosen.report.trials.push_back(trial);
      continue;
    }
    try {
      std::optional<::torch::jit::Module> module = c.build();
      if (!module) {
        trial.note = "not applicable: no 4-D floating input";
        chosen.report.trials.push_back(trial);
        continue;
      }
      trial.tried = true;
      // Batch 1, 2, the timed size and batch 1 again: some variants only go
      // wrong once the shape changed.
      double error = RelativeError(Forward(*module, one, c.channels_last), ref_one);
      if (batches) {
        error = std::max(error, RelativeError(Forward(*module, two, c.channels_last), ref_two));
      }
      error = std::max(error,
                       RelativeError(Forward(*module, timed_inputs, c.channels_last), ref_timed));
      error = std::max(error, RelativeError(Forward(*module, one, c.channels_last), ref_one));
      trial.max_relative_error = error;
      bool wrote_input = false;
      for (size_t k = 0; k < one.size(); ++k) wrote_input |= !one[k].equal(originals[k]);
      if (wrote_input && !is_reference) {
        trial.note = "refused: it writes into its input (the request's bytes)";
      } else if (!(error <= kMaxRelativeError) && !is_reference) {
        trial.note = "refused: outputs differ from the frozen module's by " +
                     std::to_string(error) + " of the largest output (tolerance " +
                     std::to_string(kMaxRelativeError) + ")";
      } else {
        trial.accepted = true;
        double best = INFINITY;
        for (int k = 0; k < (cheap ? kVariantTimedCalls : 2); ++k) {
          best = std::min(
              best, TimeCallMs([&] { Forward(*module, timed_inputs, c.channels_last); }));
        }
        trial.ms_per_item = best / static_cast<double>(timed_batch);
        accepted.push_back({i, *module, trial.ms_per_item});
      }
      if (wrote_input) {  // restore the shared inputs for the next candidate
        for (size_t k = 0; k < one.size(); ++k) one[k].copy_(originals[k]);
      }
    } catch (const std::exception& e) {
      std::string what = e.what();
      if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
        what = c10_error->what_without_backtrace();
      }
      trial.note = "refused: it failed: " + what.substr(0, 300);
    }
    chosen.report.trials.push_back(trial);
  }

  // accepted[0] is the frozen module (it is its own reference).
  const Accepted* best = nullptr;
  double frozen_ms = 0;
  for (const Accepted& a : accepted) {
    if (candidates[a.index].name == "frozen") frozen_ms = a.ms_per_item;
  }
  for (const Accepted& a : accepted) {
    if (candidates[a.index].name == "frozen") continue;
    if (frozen_ms > 0 && a.ms_per_item <= frozen_ms * (1 - kMinGain) &&
        (!best || a.ms_per_item < best->ms_per_item)) {
      best = &a;
    }
  }
  if (best) {
    chosen.module = best->module;
    chosen.channels_last = candidates[best->index].channels_last;
    chosen.report.chosen = candidates[best->index].name;
  }
  for (ExecutionVariantTrial& t : chosen.report.trials) {
    if (t.name == chosen.report.chosen) {
      t.note = t.name == "frozen" ? "chosen: no verified variant is " + Percent(kMinGain) +
                                        " faster"
                                  : "chosen: " + Percent(1 - t.ms_per_item / frozen_ms) +
                                        " less time per item than frozen";
    } else if (t.accepted && t.note.empty()) {
      t.note = "verified, not faster enough";
    }
    spdlog::info("model '{}': variant {}: {}{}{}", name, t.name,
                 t.tried ? "max relative error " + std::to_string(t.max_relative_error) + ", "
                         : std::string(),
                 t.ms_per_item > 0 ? std::to_string(t.ms_per_item) + " ms per item (batch " +
                                         std::to_string(timed_batch) + "), "
                                   : std::string(),
                 t.note);
  }
  return chosen;
}

}  // namespace inferd::backend
