// Helpers for scheduler tests: tensors and configs in one line.
#pragma once

#include <cstring>
#include <vector>

#include "common/tensor.h"
#include "config/model_config.h"

namespace inferd::scheduler::testing {

inline Tensor FloatTensor(Shape shape, float start = 0) {
  Tensor t = Tensor::Allocate(DataType::kFp32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data_as<float>()[i] = start + i;
  return t;
}

inline std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.num_elements());
}

inline config::ModelConfig Config(int max_batch, int64_t delay_us = 0, Shape dims = {2}) {
  config::ModelConfig c;
  c.name = "m";
  c.max_batch_size = max_batch;
  c.dynamic_batching.max_queue_delay_us = delay_us;
  c.max_queue_size = 16;
  c.inputs.push_back({"x", DataType::kFp32, std::move(dims), std::nullopt});
  c.outputs.push_back({"y", DataType::kFp32, {2}, std::nullopt});
  return c;
}

}  // namespace inferd::scheduler::testing
