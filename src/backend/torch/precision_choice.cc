#include "backend/torch/precision_choice.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "backend/model_file.h"
#include "backend/runtime_choice.h"
#include "backend/torch/execution_variants.h"
#include "backend/torch/precision_passes.h"
#include "backend/torch/precision_samples.h"
#include "backend/torch/tensor_conversion.h"

namespace inferd::backend {
namespace {

constexpr int kPrecisionTimedCalls = 3;
constexpr int64_t kMaxSampleBatch = 8;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string What(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string what = c10_error ? c10_error->what_without_backtrace() : e.what();
  return what.substr(0, 300);
}

// One candidate's forward on a batch of samples: its outputs in order, floating
// ones as fp32. Throws (std::exception) when the candidate fails.
using Runner = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

std::vector<at::Tensor> Run(const PrecisionModule& m, const std::vector<at::Tensor>& batch) {
  c10::InferenceMode inference_mode;
  ::torch::jit::Module module = m.module;
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : FlattenTensors(module.forward(PrecisionArguments(m, batch)))) {
    out.push_back(t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t.contiguous());
  }
  return out;
}

Runner TorchRunner(const PrecisionModule& m) {
  return [&m](const std::vector<at::Tensor>& batch) { return Run(m, batch); };
}

// Another backend's Model, fed the samples as the server feeds it: named
// inferd::Tensors in the config's input order (no copy), its outputs in the
// config's output order.
Runner ModelRunner(Model& model, const config::ModelConfig& config) {
  return [&model, &config](const std::vector<at::Tensor>& batch) {
    std::vector<at::Tensor> inputs;  // keeps the bytes the tensors borrow alive
    std::vector<NamedTensor> named;
    for (size_t i = 0; i < batch.size(); ++i) {
      inputs.push_back(batch[i].contiguous());
      const std::string name = i < config.inputs.size() ? config.inputs[i].name : "";
      StatusOr<Tensor> t = FromTorch(inputs.back(), "input '" + name + "'");
      if (!t.ok()) throw std::runtime_error(t.status().message());
      named.push_back({name, std::move(t).value()});
    }
    StatusOr<std::vector<NamedTensor>> got = model.Execute(named);
    if (!got.ok()) throw std::runtime_error(got.status().message());
    std::vector<at::Tensor> out;
    for (const NamedTensor& o : *got) {
      StatusOr<at::Tensor> t = ToTorch(o.tensor, "output '" + o.name + "'");
      if (!t.ok()) throw std::runtime_error(t.status().message());
      out.push_back(t->clone());  // the model's buffer is its own
    }
    return out;
  };
}

// Batch 0 with every input of 2 or more dims rolled by `shift` along its
// last dim: the same shapes and values (token ids stay in the vocabulary),
// in an order the module has not run. Timing on inputs it has seen would let
// a cache keyed on values flatter a candidate: libtorch 1.13's dynamic int8
// linear on oneDNN bakes each call's activation scale into the primitive it
// creates, so a repeated input finds its primitives cached while real traffic
// creates them on every call (measured: 2272 creations in 2273 matmuls over
// 128 texts, 14 ms a request on a 4 x 256 encoder, docs/PRECISION.md).
std::vector<at::Tensor> Unseen(const std::vector<at::Tensor>& batch, int64_t shift) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : batch) out.push_back(t.dim() >= 2 ? at::roll(t, {shift}, {-1}) : t);
  return out;
}

// Min over `calls` of the time per item of `batch`, each call on inputs not
// seen before (Unseen; `batch` as it is for a model that refuses them).
double MsPerItem(const Runner& run, const std::vector<at::Tensor>& batch, int calls) {
  double best = INFINITY;
  for (int i = 0; i < calls; ++i) {
    const std::vector<at::Tensor> inputs = Unseen(batch, i + 1);
    double ms = INFINITY;
    try {
      ms = TimeCallMs([&] { run(inputs); });
    } catch (const std::exception&) {
      ms = TimeCallMs([&] { run(batch); });
    }
    best = std::min(best, ms);
  }
  return best / static_cast<double>(batch.front().size(0));
}

// Min over `calls` of the time of batch 0's first item by itself (what a
// request that arrives alone costs: a fixed cost per call, such as oneDNN
// creating int8 primitives on every call, shows there and is amortised in the
// batch). `per_item` when batch 0 is one item.
double MsAlone(const Runner& run, const SampleSet& samples, int calls, double per_item) {
  const std::vector<at::Tensor>& batch = samples.batches.front();
  if (batch.front().size(0) == 1) return per_item;
  std::vector<at::Tensor> first;
  for (const at::Tensor& x : batch) first.push_back(x.narrow(0, 0, 1));
  return MsPerItem(run, first, calls);
}

// The fp32 outputs of every batch, and each output's largest magnitude.
struct Reference {
  std::vector<std::vector<at::Tensor>> outputs;  // per batch
  std::vector<double> scale;                     // per output
};

// Runs every sample through `m` and measures it against the reference into
// `trial`; empty when it passes, else why it is refused.
std::string Check(const Runner& run, const SampleSet& samples, const Reference& ref,
                  PrecisionTrial* trial) {
  std::vector<double> diff(ref.scale.size(), 0);
  for (size_t b = 0; b < samples.batches.size(); ++b) {
    std::vector<at::Tensor> got;
    try {
      got = run(samples.batches[b]);
    } catch (const std::exception& e) {
      return "fails on sample batch " + std::to_string(b + 1) + ": " + What(e);
    }
    const std::vector<at::Tensor>& want = ref.outputs[b];
    if (got.size() != want.size()) return "returns a different number of outputs";
    for (size_t i = 0; i < got.size(); ++i) {
      if (!got[i].sizes().equals(want[i].sizes())) return "returns outputs of another shape";
      if (!at::isFloatingType(want[i].scalar_type())) {
        if (!got[i].equal(want[i])) return "integer output " + std::to_string(i) + " differs";
        continue;
      }
      at::Tensor a = got[i].to(at::kDouble), r = want[i].to(at::kDouble);
      if (!a.isfinite().all().item<bool>() && r.isfinite().all().item<bool>()) {
        return "gives non-finite outputs where fp32 does not";
      }
      diff[i] = std::max(diff[i], (a - r).abs().max().item<double>());
      if (r.dim() != 2 || r.size(1) < 2) continue;  // top-1: [batch, classes] outputs
      const auto top2 = std::get<0>(r.topk(2, 1));
      const at::Tensor clear = (top2.select(1, 0) - top2.select(1, 1)) >
                               trial->tolerance * ref.scale[i];
      const at::Tensor agree = a.argmax(1) == r.argmax(1);
      trial->top1_checked += static_cast<int>(clear.sum().item<int64_t>());
      trial->top1_agreed += static_cast<int>((clear & agree).sum().item<int64_t>());
    }
  }
  for (size_t i = 0; i < diff.size(); ++i) {
    trial->max_relative_error = std::max(trial->max_relative_error, diff[i] / ref.scale[i]);
  }
  if (!(trial->max_relative_error <= trial->tolerance)) {
    return "max error " + Fmt("%.3g", trial->max_relative_error) +
           " of the largest output is above the tolerance " + Fmt("%.3g", trial->tolerance);
  }
  if (trial->top1_agreed < trial->top1_checked) {
    return "top-1 differs from fp32 on " +
           std::to_string(trial->top1_checked - trial->top1_agreed) + " of " +
           std::to_string(trial->top1_checked) + " samples with a clear fp32 margin";
  }
  return "";
}

// Why `auto` does not build `precision` here ("" when it does).
std::string WhyNotBuilt(config::Precision precision, const ::torch::jit::Module& eval) {
  const CpuPrecisionFeatures& cpu = PrecisionFeatures();
  if (precision == config::Precision::kBf16) {
    return cpu.bf16 ? "" : "this CPU has no avx512_bf16 or amx_bf16 (bf16 would be emulated)";
  }
  if (!cpu.int8_engine) return "this libtorch has no oneDNN quantized engine";
  if (!cpu.vnni) return "this CPU has no VNNI (avx512_vnni, avx_vnni, amx_int8)";
  int64_t matrices = 0, all = 0;
  for (const at::Tensor& p : eval.parameters(/*recurse=*/true)) {
    if (!p.is_floating_point()) continue;
    all += p.numel();
    if (p.dim() == 2) matrices += p.numel();
  }
  const double share = all > 0 ? static_cast<double>(matrices) / static_cast<double>(all) : 0;
  if (share < kInt8MinLinearShare) {
    return "2-D weights (linear layers) are " + Fmt("%.0f", share * 100) +
           "% of the weights; int8 quantizes linear layers only (libtorch 1.13 has no dynamic "
           "int8 convolution)";
  }
  return "";
}

StatusOr<PrecisionModule> Build(config::Precision precision, const ::torch::jit::Module& eval,
                                bool has_image_input) {
  PrecisionModule m{FrozenCopy(eval), false, false};
  if (precision == config::Precision::kBf16) {
    CastFloatConstantsToBf16(m.module);
    m.bf16_inputs = true;
    m.channels_last = has_image_input;
    return m;
  }
  TurnOffTransformerFastPaths(m.module);
  ASSIGN_OR_RETURN(int quantized, QuantizeLinearsDynamic(m.module));
  if (quantized == 0) return FailedPrecondition("no linear layer with constant weights");
  return m;
}

}  // namespace

std::vector<c10::IValue> PrecisionArguments(const PrecisionModule& m,
                                            std::vector<at::Tensor> inputs) {
  std::vector<c10::IValue> args;
  args.reserve(inputs.size());
  for (at::Tensor& t : inputs) {
    if (at::isFloatingType(t.scalar_type())) {
      if (m.bf16_inputs) t = t.to(at::kBFloat16);
      if (m.channels_last && t.dim() == 4) t = t.contiguous(at::MemoryFormat::ChannelsLast);
    }
    args.emplace_back(std::move(t));
  }
  return args;
}

StatusOr<ChosenPrecision> ChoosePrecision(const ::torch::jit::Module& eval,
                                          const PrecisionModule& fp32,
                                          const config::ModelConfig& config,
                                          const std::string& model_dir, double fp32_ms_per_item,
                                          std::vector<RuntimeCandidate> others,
                                          int calibrated_batch) {
  const std::string& name = config.name;
  const bool automatic = config.precision == config::Precision::kAuto;
  const std::string asked(config::Name(config.precision));
  ChosenPrecision chosen{fp32, std::nullopt, {}};
  PrecisionReport& report = chosen.report;
  report.requested = asked;
  report.chosen = "fp32";
  report.file = std::string(kTorchscriptFile);
  auto refuse_request = [&](const std::string& why) {
    return FailedPrecondition("model '" + name + "': precision " + asked + " " + why +
                              "; use precision: fp32 or auto");
  };
  report.served_batch = ServedBatch(config, calibrated_batch);
  const int64_t batch = std::min<int64_t>(report.served_batch, kMaxSampleBatch);
  ::torch::jit::Module reference_module = fp32.module;
  ASSIGN_OR_RETURN(SampleSet samples,
                   MakeSamples(config, model_dir, reference_module,
                               fp32_ms_per_item > kSlowMsPerItem ? kDrawnSamplesSlow : kDrawnSamples,
                               batch));
  PrecisionTrial base{"fp32", true, 0, 0, 0, 0, 0, 0, ""};
  base.file = report.file;
  Reference ref;
  std::string unusable;
  if (samples.batches.empty()) unusable = "no sample inputs (BYTES inputs): add a samples/ folder";
  if (unusable.empty()) {
    try {
      for (const auto& b : samples.batches) ref.outputs.push_back(Run(fp32, b));
      ref.scale.assign(ref.outputs.front().size(), 1e-12);
      for (const auto& outs : ref.outputs) {
        for (size_t i = 0; i < outs.size() && i < ref.scale.size(); ++i) {
          if (at::isFloatingType(outs[i].scalar_type())) {
            ref.scale[i] = std::max(ref.scale[i], outs[i].abs().max().item<double>());
          }
        }
      }
    } catch (const std::exception& e) {
      unusable = "fp32 fails on the " + samples.source + " samples: " + What(e);
    }
  }
  if (!unusable.empty()) {
    if (!automatic) return refuse_request("cannot be checked: " + unusable);
    base.verdict = "chosen: " + unusable;
    report.candidates.push_back(base);
    spdlog::warn("model '{}': precision auto serves fp32 on torchscript: {}", name, unusable);
    return chosen;
  }
  report.samples = samples.items;
  report.sample_source = samples.source;
  report.timed_batch = static_cast<int>(samples.batches.front().front().size(0));
  // A slow model's first timing tells; a fast one's minimum over a few calls.
  const Runner reference = TorchRunner(fp32);
  base.ms_per_item = MsPerItem(reference, samples.batches.front(), 1);
  const int calls = base.ms_per_item > kSlowMsPerItem ? 1 : kPrecisionTimedCalls;
  if (calls > 1) {
    base.ms_per_item =
        std::min(base.ms_per_item, MsPerItem(reference, samples.batches.front(), calls));
  }
  base.ms_alone = MsAlone(reference, samples, calls, base.ms_per_item);
  bool has_image_input = false;
  for (const at::Tensor& t : samples.batches.front()) {
    has_image_input |= t.dim() == 4 && at::isFloatingType(t.scalar_type());
  }

  // Checks and times one built candidate into `t`; false when refused.
  const auto measure = [&](const Runner& run, PrecisionTrial& t) {
    t.built = true;
    const std::string why = Check(run, samples, ref, &t);
    if (!why.empty()) {
      t.verdict = "refused: " + why;
      return false;
    }
    t.ms_per_item = MsPerItem(run, samples.batches.front(), calls);
    t.ms_alone = MsAlone(run, samples, calls, t.ms_per_item);
    return true;
  };
  const std::string int8_name(config::Name(config::Precision::kInt8));
  const std::string int8_not_served =
      "auto does not serve int8 with this libtorch (its kernels are compiled anew for every "
      "request: docs/PRECISION.md), precision: int8 does";

  // The torch candidates: built[i] is report.candidates[i + 1]'s module, kept
  // while auto may serve it.
  const std::vector<config::Precision> wanted =
      automatic ? std::vector<config::Precision>{config::Precision::kBf16, config::Precision::kInt8}
                : std::vector<config::Precision>{config.precision};
  std::vector<std::optional<PrecisionModule>> built;
  std::vector<bool> kept;  // per candidate: within the guard and timed
  report.candidates.push_back(base);
  kept.push_back(true);
  for (const config::Precision precision : wanted) {
    PrecisionTrial t{std::string(config::Name(precision)), false, 0, 0, 0, 0, 0, 0, ""};
    t.file = report.file;
    t.tolerance = config.precision_tolerance.value_or(
        precision == config::Precision::kBf16 ? kBf16Tolerance : kInt8Tolerance);
    std::optional<PrecisionModule> module;
    bool ok = false;
    const std::string skip = automatic ? WhyNotBuilt(precision, eval) : "";
    if (!skip.empty()) {
      t.verdict = "not built: " + skip;
    } else {
      StatusOr<PrecisionModule> m = Internal("not built");
      try {
        m = Build(precision, eval, has_image_input);
      } catch (const std::exception& e) {
        m = Internal(What(e));
      }
      if (!m.ok()) {
        t.verdict = "not built: " + m.status().message();
        if (!automatic) return refuse_request("cannot be built: " + m.status().message());
      } else {
        ok = measure(TorchRunner(*m), t);
        if (!ok && !automatic) return refuse_request("is " + t.verdict);
        // A candidate auto may not serve is not kept past its timing.
        const bool servable = !automatic || kAutoServesInt8 || t.precision != int8_name;
        if (ok && servable) module = std::move(m).value();
      }
    }
    report.candidates.push_back(t);
    kept.push_back(ok);
    built.push_back(std::move(module));
  }
  // The other runtimes' candidates (auto only: LoadOnnxCandidates loads none
  // otherwise), each run by its backend.
  const size_t first_other = report.candidates.size();
  for (RuntimeCandidate& c : others) {
    PrecisionTrial t{c.precision, false, 0, 0, 0, 0, 0, 0, ""};
    t.runtime = c.runtime;
    t.file = c.file;
    t.tolerance = config.precision_tolerance.value_or(c.precision == "fp32" ? kFp32Tolerance
                                                                            : kInt8Tolerance);
    bool ok = false;
    if (!c.model) {
      t.verdict = "not built: " + c.error;
    } else {
      ok = measure(ModelRunner(*c.model, config), t);
      if (!ok) c.model.reset();  // refused: released now
    }
    report.candidates.push_back(t);
    kept.push_back(ok);
  }

  size_t best = 0;  // index in report.candidates; 0 is torch fp32
  std::vector<CandidateTiming> timings;
  for (size_t i = 0; i < report.candidates.size(); ++i) {
    const PrecisionTrial& t = report.candidates[i];
    CandidateTiming c{t.runtime + " " + t.precision, kept[i], "", t.ms_per_item, t.ms_alone};
    if (automatic && !kAutoServesInt8 && t.runtime == "torchscript" && t.precision == int8_name) {
      c.not_servable = int8_not_served;
    }
    timings.push_back(c);
  }
  const RuntimeChoice choice = ChooseRuntime(timings, report.timed_batch);
  best = automatic ? choice.chosen : 1;  // an explicit precision that was kept is served
  for (size_t i = 0; i < report.candidates.size(); ++i) {
    PrecisionTrial& t = report.candidates[i];
    t.ms_served = choice.ms_served[i];
    if (!choice.verdicts[i].empty()) t.verdict = choice.verdicts[i];
    if (!automatic && i == best) {
      const std::string prefix = "accepted, not chosen: ";
      if (t.verdict.rfind(prefix, 0) == 0) {
        t.verdict = "chosen as asked: " + t.verdict.substr(prefix.size());
      }
    }
    if (!automatic && i == 0) t.verdict = "the reference";
    // "precision bf16: ..." for libtorch's (as before other runtimes were
    // tried), "precision int8 on onnxruntime (model.int8.onnx): ..." for others.
    const std::string which = t.runtime == "torchscript"
                                  ? t.precision
                                  : t.precision + " on " + t.runtime + " (" + t.file + ")";
    spdlog::info("model '{}': precision {}: {} ms per item ({} alone), max error {} (tolerance "
                 "{}), top-1 {}/{}: {}",
                 name, which, Fmt("%.3f", t.ms_per_item), Fmt("%.3f", t.ms_alone),
                 Fmt("%.3g", t.max_relative_error), Fmt("%.3g", t.tolerance), t.top1_agreed,
                 t.top1_checked, t.verdict);
  }
  const PrecisionTrial& served = report.candidates[best];
  report.chosen = served.precision;
  report.runtime = served.runtime;
  report.file = served.file;
  if (best >= first_other) {
    chosen.other = std::move(others[best - first_other]);
  } else if (best > 0) {
    chosen.served = *built[best - 1];
  }
  others.clear();  // the losers' sessions go now
  spdlog::info("model '{}': precision {} serves {} on {} ({}, served batch {}, timed at {}) "
               "(checked on {} samples, {})",
               name, asked, report.chosen, report.runtime, report.file, report.served_batch,
               report.timed_batch, report.samples, report.sample_source);
  return chosen;
}

}  // namespace inferd::backend
