#include "serving/v2_inference.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "serving/bytes_elements.h"

namespace inferd::serving {
namespace {

// Checks requested output names against the config before any compute is spent.
Status CheckRequestedOutputs(const config::ModelConfig& config,
                             const std::vector<V2RequestedOutput>& outputs) {
  if (config.outputs.empty() || outputs.empty()) return Status::Ok();
  std::set<std::string> known;
  std::string names;
  for (const auto& spec : config.outputs) known.insert(spec.name);
  if (config.postprocess.kind != config::PostprocessKind::kRaw) known.insert({"labels", "scores"});
  for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
  for (const auto& out : outputs) {
    if (!known.count(out.name)) {
      return InvalidArgument("unknown output '" + out.name + "'; model '" + config.name +
                             "' has outputs: " + names);
    }
  }
  return Status::Ok();
}

Status TakeRawInputs(const config::ModelConfig& config, const std::vector<NamedTensor>& inputs,
                     scheduler::InferenceRequest& request) {
  if (inputs.size() != 1 || inputs[0].tensor.dtype() != DataType::kBytes) {
    return InvalidArgument("model '" + config.name + "' preprocesses raw data (" +
                           std::string(config::Name(config.preprocess.kind)) +
                           "): send one BYTES input whose elements are the raw payloads");
  }
  const Tensor& t = inputs[0].tensor;
  // Counted against the batch size before any element is copied out: a
  // million empty elements cost 4 MB of body but would make a million items.
  if (t.num_elements() > config.max_batch_size) {
    return InvalidArgument("input '" + inputs[0].name + "' carries " +
                           std::to_string(t.num_elements()) +
                           " payloads, more than max_batch_size " +
                           std::to_string(config.max_batch_size));
  }
  ASSIGN_OR_RETURN(auto elements, SplitBytesElements(t.data(), t.byte_size(), t.num_elements(),
                                                     "input '" + inputs[0].name + "'"));
  for (std::string_view e : elements) request.raw.push_back({"", std::string(e)});
  return Status::Ok();
}

}  // namespace

StatusOr<scheduler::InferenceRequest> MakeInferenceRequest(const config::ModelConfig& config,
                                                           V2InferRequest v2, TimePoint received) {
  RETURN_IF_ERROR(CheckRequestedOutputs(config, v2.outputs));
  scheduler::InferenceRequest request;
  if (config.preprocess.kind != config::PreprocessKind::kNone) {
    RETURN_IF_ERROR(TakeRawInputs(config, v2.inputs, request));
  } else {
    request.inputs = std::move(v2.inputs);
  }
  request.id = std::move(v2.id);
  request.priority = v2.priority;
  if (v2.timeout_us > 0) {  // saturates: a timeout of 2^63 us must not wrap into the past
    request.deadline = DeadlineAfter(received, std::chrono::microseconds(v2.timeout_us));
  }
  return request;
}

V2ResponseContext MakeResponseContext(const std::string& model_name, int64_t model_version,
                                      const V2InferRequest& request) {
  return {model_name, model_version, request.id, request.outputs, request.binary_data_output};
}

std::vector<NamedTensor> V2OutputTensors(const scheduler::InferenceResponse& response) {
  std::vector<NamedTensor> out = response.outputs;
  if (response.labels.empty()) return out;
  size_t k = 0;
  for (const auto& item : response.labels) k = std::max(k, item.size());
  int64_t n = static_cast<int64_t>(response.labels.size());
  std::vector<std::byte> label_bytes;
  Tensor scores = Tensor::Allocate(DataType::kFp32, {n, static_cast<int64_t>(k)});
  float* s = scores.mutable_data_as<float>();
  for (const auto& item : response.labels) {
    // Items with fewer labels (a sigmoid threshold) are padded with "" / 0.
    for (size_t j = 0; j < k; ++j) {
      AppendBytesElement(label_bytes, j < item.size() ? item[j].label : "");
      *s++ = j < item.size() ? item[j].score : 0.0f;
    }
  }
  auto has = [&](std::string_view name) {
    for (const auto& t : out)
      if (t.name == name) return true;
    return false;
  };
  if (!has("labels")) {
    out.push_back({"labels", Tensor::FromBytes(DataType::kBytes, {n, static_cast<int64_t>(k)},
                                               std::move(label_bytes))});
  }
  if (!has("scores")) out.push_back({"scores", std::move(scores)});
  return out;
}

StatusOr<std::vector<V2Output>> SelectV2Outputs(const scheduler::InferenceResponse& response,
                                                const V2ResponseContext& context) {
  std::vector<NamedTensor> available = V2OutputTensors(response);
  std::vector<V2Output> chosen;
  if (context.outputs.empty()) {
    for (auto& t : available) chosen.push_back({std::move(t), context.binary_data_output});
    return chosen;
  }
  for (const auto& want : context.outputs) {
    const NamedTensor* found = nullptr;
    for (const auto& t : available)
      if (t.name == want.name) found = &t;
    if (!found) {
      std::string names;
      for (const auto& t : available) names += (names.empty() ? "" : ", ") + t.name;
      return InvalidArgument("unknown output '" + want.name + "'; model '" + context.model_name +
                             "' has outputs: " + names);
    }
    chosen.push_back({*found, want.binary || context.binary_data_output});
  }
  return chosen;
}

}  // namespace inferd::serving
