// TorchServe /predictions JSON body for a model without preprocess. The first
// byte picks one of a few model configs (one input, several, every datatype,
// fixed dims); the rest is the body. A parsed request is validated against
// that config and written back as the answer.
#include <vector>

#include "fuzz_util.h"
#include "http/torchserve_codec.h"
#include "scheduler/request_validation.h"

namespace {

using inferd::DataType;
using inferd::config::ModelConfig;

std::vector<ModelConfig> Configs() {
  std::vector<ModelConfig> out;
  ModelConfig one;
  one.name = "one";
  one.max_batch_size = 8;
  one.inputs = {{"x", DataType::kFp32, {-1}, 0.0}};
  out.push_back(one);
  ModelConfig two = one;
  two.name = "two";
  two.inputs = {{"a", DataType::kFp32, {-1, 4}, std::nullopt},
                {"b", DataType::kInt64, {-1}, std::nullopt}};
  out.push_back(two);
  ModelConfig image = one;
  image.name = "image";
  image.max_batch_size = 1;
  image.inputs = {{"image", DataType::kFp32, {1, 8, 8}, std::nullopt}};
  out.push_back(image);
  for (DataType d : {DataType::kBool, DataType::kUint8, DataType::kInt8, DataType::kInt16,
                     DataType::kInt32, DataType::kInt64, DataType::kFp16, DataType::kBf16,
                     DataType::kFp64, DataType::kBytes}) {
    ModelConfig typed = one;
    typed.name = std::string(inferd::DataTypeName(d));
    typed.inputs = {{"x", d, {-1, -1}, std::nullopt}};
    out.push_back(typed);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<ModelConfig> configs = Configs();
  if (size < 1) return 0;
  const ModelConfig& config = configs[data[0] % configs.size()];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  auto parsed = inferd::http::ParsePredictionJson(body, config);
  if (!parsed.ok()) {
    inferd::fuzz::CheckClientError(parsed.status());
    return 0;
  }
  for (const auto& in : parsed->inputs) inferd::fuzz::CheckTensor(in.tensor);
  inferd::scheduler::InferenceRequest request;
  request.inputs = parsed->inputs;
  auto items = inferd::scheduler::ValidateRequest(config, false, &request);
  if (!items.ok()) inferd::fuzz::CheckClientError(items.status());
  inferd::scheduler::InferenceResponse response;
  response.outputs = parsed->inputs;
  auto written = inferd::http::WritePredictionResponse(response, parsed->added_batch_dim);
  if (written.ok()) {
    inferd::fuzz::CheckJson(*written);
  } else {
    inferd::fuzz::CheckClientError(written.status());
  }
  return 0;
}
