#include "profile/profile_inputs.h"

#include <random>

namespace inferd::profile {

int64_t DefaultVariableDim(const config::ModelConfig& config) {
  if (config.preprocess.kind == config::PreprocessKind::kText && config.preprocess.max_length > 0) {
    return config.preprocess.max_length;
  }
  return 1;
}

namespace {

template <typename T>
void Fill(Tensor& t, T value) {
  T* p = t.mutable_data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = value;
}

template <typename T>
void FillUniform(Tensor& t, std::mt19937& rng) {
  std::uniform_real_distribution<T> dist(-1, 1);
  T* p = t.mutable_data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = dist(rng);
}

}  // namespace

StatusOr<std::vector<NamedTensor>> MakeProfileInputs(const config::ModelConfig& config,
                                                     int64_t variable_dim, int batch) {
  const std::string where = "model '" + config.name + "': ";
  if (variable_dim < 1) {
    return InvalidArgument(where + "the length of variable dims must be >= 1, got " +
                           std::to_string(variable_dim));
  }
  if (config.inputs.empty()) {
    return InvalidArgument(where +
                           "config.yaml lists no inputs: the profiler needs their "
                           "datatypes and shapes to make a request");
  }
  std::mt19937 rng(42);
  std::vector<NamedTensor> inputs;
  for (const auto& spec : config.inputs) {
    Shape shape = {batch};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? variable_dim : d);
    if (spec.dtype == DataType::kBytes) {
      return InvalidArgument(where + "input '" + spec.name +
                             "' is BYTES: the profiler makes numeric tensors only");
    }
    Tensor t = Tensor::Allocate(spec.dtype, shape);
    switch (spec.dtype) {
      case DataType::kFp32:
        FillUniform<float>(t, rng);
        break;
      case DataType::kFp64:
        FillUniform<double>(t, rng);
        break;
      case DataType::kBool:
        Fill<uint8_t>(t, 1);
        break;
      case DataType::kUint8:
        Fill<uint8_t>(t, 1);
        break;
      case DataType::kInt8:
        Fill<int8_t>(t, 1);
        break;
      case DataType::kInt16:
        Fill<int16_t>(t, 1);
        break;
      case DataType::kInt32:
        Fill<int32_t>(t, 1);
        break;
      case DataType::kInt64:
        Fill<int64_t>(t, 1);
        break;
      default:
        break;  // FP16, BF16: Allocate's zeros
    }
    inputs.push_back({spec.name, std::move(t)});
  }
  return inputs;
}

}  // namespace inferd::profile
