#include "backend/torch/torch_model.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "backend/chosen_model.h"
#include "backend/torch/execution_variants.h"
#include "backend/torch/intra_op_pool.h"
#include "backend/torch/onnx_candidates.h"
#include "backend/torch/precision_choice.h"
#include "backend/torch/tensor_conversion.h"
#include "common/text_format.h"
#include "memory/allocator.h"

namespace inferd::backend {
namespace {

// Error texts from libtorch carry C++ backtraces; users need the first part.
std::string Message(const std::exception& e) {
  std::string text;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    text = c10_error->what_without_backtrace();
  } else {
    text = e.what();
  }
  constexpr size_t kMaxLength = 2000;
  if (text.size() > kMaxLength) text = text.substr(0, kMaxLength) + "...";
  return text;
}

bool IsFloating(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// forward(self, a, b=...) takes between 1 and 2 inputs here; a config that
// lists another number of inputs can never run.
Status CheckInputCount(::torch::jit::Module& module, const config::ModelConfig& config) {
  if (config.inputs.empty()) return Status::Ok();
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  size_t total = 0, required = 0;
  std::string names;
  for (size_t i = 1; i < arguments.size(); ++i) {  // arguments[0] is self
    ++total;
    if (!arguments[i].default_value()) ++required;
    names += (names.empty() ? "" : ", ") + arguments[i].name();
  }
  const size_t listed = config.inputs.size();
  if (listed < required || listed > total) {
    return InvalidArgument("model " + Quoted(config.name) + ": config.yaml lists " +
                           std::to_string(listed) + " inputs but forward(" + names + ") takes " +
                           (required == total ? std::to_string(total)
                                              : std::to_string(required) + " to " +
                                                    std::to_string(total)));
  }
  return Status::Ok();
}

// The other runtime's candidate that precision auto chose, served with the
// choice as its report; the caller has dropped its torch modules first.
StatusOr<std::shared_ptr<Model>> ServeOtherRuntime(const LoadOptions& load,
                                                   RuntimeCandidate chosen, ExecutionReport report,
                                                   int executor_threads,
                                                   std::chrono::steady_clock::time_point start) {
  const std::string file = chosen.file, runtime = chosen.runtime;
  ASSIGN_OR_RETURN(std::shared_ptr<Model> served,
                   ServeCandidate(load, std::move(chosen), executor_threads));
  memory::ReleaseFreeMemory();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start).count();
  spdlog::info("model '{}': loaded {} in {} ms: precision auto serves {} on {} ({}) in place of "
               "model.pt",
               load.config.name, load.model_path, ms, report.precision.chosen, runtime, file);
  return std::shared_ptr<Model>(
      std::make_shared<ChosenModel>(std::move(served), std::move(report)));
}

}  // namespace

TorchModel::TorchModel(::torch::jit::Module module, config::ModelConfig config, bool frozen,
                       bool channels_last, bool bf16_inputs, ExecutionReport report,
                       int64_t weight_bytes)
    : module_(std::move(module)),
      config_(std::move(config)),
      bf16_inputs_(bf16_inputs),
      frozen_(frozen),
      channels_last_(channels_last),
      report_(std::move(report)),
      weight_bytes_(weight_bytes) {}

StatusOr<std::shared_ptr<Model>> TorchModel::Load(const LoadOptions& load,
                                                  const Options& options) {
  const std::string& path = load.model_path;
  const std::string& name = load.config.name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgument("model " + Quoted(name) + ": model file " + Quoted(path) +
                           " does not exist or is not a file");
  }
  const auto start = std::chrono::steady_clock::now();
  ::torch::jit::Module module;
  try {
    module = ::torch::jit::load(path, at::Device(at::kCPU));
  } catch (const std::exception& e) {
    return InvalidArgument("model " + Quoted(name) + ": cannot load TorchScript file " +
                           Quoted(path) + ": " + Message(e));
  }
  bool frozen = false;
  int64_t weight_bytes = 0;
  try {
    if (!module.find_method("forward")) {
      return InvalidArgument("model " + Quoted(name) + ": " + Quoted(path) +
                             " has no forward() method");
    }
    RETURN_IF_ERROR(CheckInputCount(module, load.config));
    module.eval();
    for (const at::Tensor& p : module.parameters(/*recurse=*/true))
      weight_bytes += static_cast<int64_t>(p.nbytes());
    for (const at::Tensor& b : module.buffers(/*recurse=*/true))
      weight_bytes += static_cast<int64_t>(b.nbytes());
  } catch (const std::exception& e) {
    return InvalidArgument("model " + Quoted(name) + ": cannot prepare " + Quoted(path) + ": " +
                           Message(e));
  }
  ::torch::jit::Module eval = module;
  try {
    module = ::torch::jit::freeze(module);
    frozen = true;
  } catch (const std::exception& e) {
    spdlog::warn("model '{}': torch::jit::freeze failed, serving the unfrozen module: {}", name,
                 Message(e));
  }
  ExecutionReport report;
  bool channels_last = false;
  if (frozen && options.choose_variant) {
    ChosenVariant chosen = ChooseVariant(eval, module, load.config,
                                         std::string(config::Name(load.config.variants)));
    module = chosen.module;
    channels_last = chosen.channels_last;
    report = std::move(chosen.report);
  }
  bool bf16_inputs = false;
  if (load.config.precision != config::Precision::kFp32) {
    if (!frozen) {
      return FailedPrecondition("model " + Quoted(name) + ": precision " +
                                std::string(config::Name(load.config.precision)) +
                                " needs a module torch::jit::freeze accepts; use precision: fp32");
    }
    const std::string model_dir = std::filesystem::path(path).parent_path().parent_path().string();
    double fp32_ms = 0;
    for (const ExecutionVariantTrial& t : report.trials) {
      if (t.name == report.chosen) fp32_ms = t.ms_per_item;
    }
    // In a scope of its own: ASSIGN_OR_RETURN's StatusOr lives to the end of
    // the scope, and "moving" a torch::jit::Module copies the handle (it has
    // no move constructor), so it would keep the fp32 weights alive.
    std::optional<RuntimeCandidate> other;
    {
      ASSIGN_OR_RETURN(ChosenPrecision chosen,
                       ChoosePrecision(eval, {module, channels_last, false}, load.config,
                                       model_dir, fp32_ms, LoadOnnxCandidates(load),
                                       load.served_batch));
      report.precision = std::move(chosen.report);
      if (chosen.other) {
        other = std::move(chosen.other);
      } else {
        module = chosen.served.module;
        channels_last = chosen.served.channels_last;
        bf16_inputs = chosen.served.bf16_inputs;
      }
    }
    if (other) {
      // Every torch copy of the weights goes before the chosen one is served.
      module = ::torch::jit::Module();
      eval = ::torch::jit::Module();
      memory::ReleaseFreeMemory();
      return ServeOtherRuntime(load, std::move(*other), std::move(report),
                               std::max(options.executor_threads, options.all_cores), start);
    }
  }
  eval = ::torch::jit::Module();  // the unfrozen weights are not needed any more
  auto model = std::shared_ptr<TorchModel>(
      new TorchModel(std::move(module), load.config, frozen, channels_last, bf16_inputs,
                     std::move(report), weight_bytes));
  if (options.warm_up) {
    Status status = model->WarmUp();
    if (!status.ok()) return status;
  }
  // Loading held the file's, the unfrozen and the candidates' copies of the
  // weights; the allocator keeps freed memory for reuse: give it back now.
  memory::ReleaseFreeMemory();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start).count();
  const std::string served_precision = model->report_.precision.chosen.empty()
                                           ? std::string(config::Name(load.config.precision))
                                           : model->report_.precision.chosen;
  spdlog::info("model '{}': loaded {} in {} ms ({}, precision {}, variant {})", name, path, ms,
               frozen ? "frozen" : "not frozen", served_precision,
               model->report_.chosen.empty() ? "none" : model->report_.chosen);
  return std::shared_ptr<Model>(std::move(model));
}

Status TorchModel::WarmUp() {
  if (config_.inputs.empty()) return Status::Ok();
  std::vector<NamedTensor> inputs;
  for (const config::TensorSpec& spec : config_.inputs) {
    if (spec.dtype == DataType::kBytes) return Status::Ok();
    Shape shape{1};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? 1 : d);
    inputs.push_back({spec.name, Tensor::Allocate(spec.dtype, std::move(shape))});
  }
  for (int i = 0; i < 2; ++i) {
    c10::IValue result;
    try {
      c10::InferenceMode inference_mode;
      ASSIGN_OR_RETURN(std::vector<c10::IValue> args, ToArguments(inputs));
      result = module_.forward(std::move(args));
    } catch (const std::exception& e) {
      // Zero inputs may be meaningless to a model; requests will tell.
      spdlog::info("model '{}': warm-up on zero inputs failed (harmless): {}", config_.name,
                   Message(e));
      return Status::Ok();
    }
    // The model ran: outputs that do not fit the config are a config error.
    auto outputs = FromResult(result);
    if (!outputs.ok()) {
      return InvalidArgument("the outputs in config.yaml do not match what the model returns: " +
                             outputs.status().message());
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<c10::IValue>> TorchModel::ToArguments(
    const std::vector<NamedTensor>& inputs) const {
  std::vector<c10::IValue> args;
  args.reserve(inputs.size());
  auto add = [&](const NamedTensor& input) -> Status {
    ASSIGN_OR_RETURN(at::Tensor t, ToTorch(input.tensor, "input " + Quoted(input.name)));
    if (at::isFloatingType(t.scalar_type())) {
      if (bf16_inputs_) t = t.to(at::kBFloat16);
      if (channels_last_ && t.dim() == 4) t = t.contiguous(at::MemoryFormat::ChannelsLast);
    }
    args.emplace_back(std::move(t));
    return Status::Ok();
  };
  if (config_.inputs.empty()) {
    for (const NamedTensor& input : inputs) RETURN_IF_ERROR(add(input));
    return args;
  }
  if (inputs.size() != config_.inputs.size()) {
    return InvalidArgument("model " + Quoted(config_.name) + " takes " +
                           std::to_string(config_.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < config_.inputs.size(); ++i) {
    const config::TensorSpec& spec = config_.inputs[i];
    const NamedTensor* input = nullptr;
    if (inputs[i].name == spec.name || inputs[i].name.empty()) {
      input = &inputs[i];
    } else {
      for (const NamedTensor& candidate : inputs) {
        if (candidate.name == spec.name) input = &candidate;
      }
    }
    if (input == nullptr) {
      return InvalidArgument("model " + Quoted(config_.name) + ": input " + Quoted(spec.name) +
                             " is missing");
    }
    if (input->tensor.dtype() != spec.dtype) {
      return InvalidArgument("input " + Quoted(spec.name) + ": expected datatype " +
                             std::string(DataTypeName(spec.dtype)) + ", got " +
                             std::string(DataTypeName(input->tensor.dtype())));
    }
    RETURN_IF_ERROR(add(*input));
  }
  return args;
}

StatusOr<NamedTensor> TorchModel::ToOutput(std::string name, at::Tensor tensor,
                                           const config::TensorSpec* spec) const {
  if (bf16_inputs_ && tensor.scalar_type() == at::kBFloat16) {
    at::ScalarType wanted = at::kFloat;
    if (spec != nullptr) {
      if (auto t = ToTorchDtype(spec->dtype); t && IsFloating(*t)) wanted = *t;
    }
    tensor = tensor.to(wanted);
  }
  ASSIGN_OR_RETURN(Tensor out, FromTorch(tensor, "output " + Quoted(name)));
  if (spec != nullptr && out.dtype() != spec->dtype) {
    return Internal("model " + Quoted(config_.name) + ": output " + Quoted(name) +
                    " has datatype " + std::string(DataTypeName(out.dtype())) +
                    " but the config says " + std::string(DataTypeName(spec->dtype)));
  }
  return NamedTensor{std::move(name), std::move(out)};
}

StatusOr<std::vector<NamedTensor>> TorchModel::FromResult(const c10::IValue& result) const {
  const std::string model = "model " + Quoted(config_.name);
  // (name from a dict key or empty, tensor) in the order the model returned them.
  std::vector<std::pair<std::string, at::Tensor>> returned;
  bool is_dict = false;
  auto take = [&](const c10::IValue& v, std::string key) -> Status {
    if (!v.isTensor()) {
      return Internal(model + ": forward() returned a " + v.tagKind() +
                      " where a tensor was expected");
    }
    returned.emplace_back(std::move(key), v.toTensor());
    return Status::Ok();
  };
  if (result.isTensor()) {
    RETURN_IF_ERROR(take(result, ""));
  } else if (result.isTuple()) {
    for (const c10::IValue& v : result.toTupleRef().elements()) RETURN_IF_ERROR(take(v, ""));
  } else if (result.isList()) {
    for (const c10::IValue& v : result.toListRef()) RETURN_IF_ERROR(take(v, ""));
  } else if (result.isGenericDict()) {
    is_dict = true;
    for (const auto& entry : result.toGenericDict()) {
      if (!entry.key().isString()) {
        return Internal(model + ": forward() returned a dict whose keys are not strings");
      }
      RETURN_IF_ERROR(take(entry.value(), entry.key().toStringRef()));
    }
  } else {
    return Internal(model + ": forward() returned a " + result.tagKind() +
                    "; expected a tensor, a tuple or list of tensors, or a Dict[str, Tensor]");
  }

  std::vector<NamedTensor> outputs;
  outputs.reserve(returned.size());
  if (config_.outputs.empty()) {
    for (size_t i = 0; i < returned.size(); ++i) {
      std::string name = is_dict ? returned[i].first : "output" + std::to_string(i);
      ASSIGN_OR_RETURN(NamedTensor out, ToOutput(std::move(name), returned[i].second, nullptr));
      outputs.push_back(std::move(out));
    }
    return outputs;
  }
  if (is_dict) {
    for (const config::TensorSpec& spec : config_.outputs) {
      const at::Tensor* found = nullptr;
      std::string keys;
      for (const auto& [key, tensor] : returned) {
        if (key == spec.name) found = &tensor;
        keys += (keys.empty() ? "" : ", ") + key;
      }
      if (found == nullptr) {
        return Internal(model + ": output " + Quoted(spec.name) +
                        " is not in the dict forward() returned (keys: " + keys + ")");
      }
      ASSIGN_OR_RETURN(NamedTensor out, ToOutput(spec.name, *found, &spec));
      outputs.push_back(std::move(out));
    }
    return outputs;
  }
  if (returned.size() != config_.outputs.size()) {
    return Internal(model + ": forward() returned " + std::to_string(returned.size()) +
                    " tensors but the config lists " + std::to_string(config_.outputs.size()) +
                    " outputs");
  }
  for (size_t i = 0; i < returned.size(); ++i) {
    const config::TensorSpec& spec = config_.outputs[i];
    ASSIGN_OR_RETURN(NamedTensor out, ToOutput(spec.name, returned[i].second, &spec));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

StatusOr<std::vector<NamedTensor>> TorchModel::Execute(const std::vector<NamedTensor>& inputs) {
  try {
    Status width = ApplyCallWidth();  // the scheduler may have widened this thread
    if (!width.ok()) spdlog::warn("torch: executor thread width: {}", width.message());
    c10::InferenceMode inference_mode;
    ASSIGN_OR_RETURN(std::vector<c10::IValue> args, ToArguments(inputs));
    return FromResult(module_.forward(std::move(args)));
  } catch (const std::exception& e) {
    return Internal("model " + Quoted(config_.name) + " failed in forward(): " + Message(e));
  }
}

}  // namespace inferd::backend
