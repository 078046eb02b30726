#include "pipeline/postprocessor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>

namespace inferd::pipeline {
namespace {

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Element i of a float tensor as float; false for a non-float dtype.
bool ToFloats(const Tensor& t, std::vector<float>* out) {
  const size_t n = static_cast<size_t>(t.num_elements());
  out->resize(n);
  switch (t.dtype()) {
    case DataType::kFp32:
      std::memcpy(out->data(), t.data(), n * 4);
      return true;
    case DataType::kFp64:
      for (size_t i = 0; i < n; ++i) (*out)[i] = static_cast<float>(t.data_as<double>()[i]);
      return true;
    case DataType::kBf16:
      for (size_t i = 0; i < n; ++i) {
        uint32_t bits = uint32_t{t.data_as<uint16_t>()[i]} << 16;
        std::memcpy(&(*out)[i], &bits, 4);
      }
      return true;
    case DataType::kFp16:
      for (size_t i = 0; i < n; ++i) (*out)[i] = HalfToFloat(t.data_as<uint16_t>()[i]);
      return true;
    default:
      return false;
  }
}

void Softmax(float* x, size_t n) {
  const float max = *std::max_element(x, x + n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - max));
  const float inv = static_cast<float>(1.0 / sum);
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

StatusOr<std::vector<std::string>> ReadLabels(const std::string& path) {
  std::ifstream in(path);
  if (!in) return FailedPrecondition("postprocess.labels: cannot read '" + path + "'");
  std::vector<std::string> labels;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  while (!labels.empty() && labels.back().empty()) labels.pop_back();
  if (labels.empty()) return FailedPrecondition("postprocess.labels: '" + path + "' is empty");
  return labels;
}

StatusOr<std::unique_ptr<Postprocessor>> Postprocessor::Create(const config::ModelConfig& config,
                                                               const std::string& model_dir) {
  const config::PostprocessConfig& c = config.postprocess;
  using Kind = config::PostprocessKind;
  if (c.kind == Kind::kRaw) return FailedPrecondition("postprocess.kind: raw has no postprocessor");
  if (c.kind == Kind::kTopk && c.k < 1) return FailedPrecondition("postprocess.k: expected >= 1");
  std::unique_ptr<Postprocessor> p(new Postprocessor());
  p->config_ = c;
  if (!c.labels.empty() && c.kind != Kind::kSoftmax) {
    std::string path = c.labels.front() == '/' ? c.labels : model_dir + "/" + c.labels;
    ASSIGN_OR_RETURN(p->labels_, ReadLabels(path));
    if (!config.outputs.empty()) {
      const Shape& dims = config.outputs.front().dims;
      int64_t classes = NumElements(dims);
      if (classes > 0 && classes != static_cast<int64_t>(p->labels_.size())) {
        return FailedPrecondition("postprocess.labels: '" + path + "' has " +
                                  std::to_string(p->labels_.size()) + " labels but output '" +
                                  config.outputs.front().name + "' has " + std::to_string(classes) +
                                  " classes");
      }
    }
  }
  return p;
}

std::string Postprocessor::LabelOf(size_t index) const {
  return index < labels_.size() ? labels_[index] : std::to_string(index);
}

Status Postprocessor::Run(scheduler::InferenceResponse* response) const {
  if (response->outputs.empty()) return Internal("postprocess: the model returned no output");
  const NamedTensor& output = response->outputs.front();
  const Shape& shape = output.tensor.shape();
  if (shape.empty() || shape[0] < 1) {
    return Internal("postprocess: output '" + output.name +
                    "' has no batch dim: " + ShapeToString(shape));
  }
  const size_t items = static_cast<size_t>(shape[0]);
  const size_t classes = static_cast<size_t>(output.tensor.num_elements()) / items;
  if (classes == 0) return Internal("postprocess: output '" + output.name + "' is empty");
  if (!labels_.empty() && classes != labels_.size()) {
    return Internal("postprocess: output '" + output.name + "' has " + std::to_string(classes) +
                    " classes but the labels file has " + std::to_string(labels_.size()));
  }
  std::vector<float> values;
  if (!ToFloats(output.tensor, &values)) {
    return Internal("postprocess: output '" + output.name + "' is " +
                    std::string(DataTypeName(output.tensor.dtype())) + ", expected a float type");
  }
  using Kind = config::PostprocessKind;
  const Kind kind = config_.kind;
  if (kind == Kind::kSoftmax) {
    for (size_t i = 0; i < items; ++i) Softmax(&values[i * classes], classes);
    std::vector<std::byte> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    response->outputs.front().tensor = Tensor::FromBytes(DataType::kFp32, shape, std::move(bytes));
    return Status::Ok();
  }
  response->labels.assign(items, {});
  std::vector<size_t> order(classes);
  for (size_t i = 0; i < items; ++i) {
    float* x = &values[i * classes];
    auto& out = response->labels[i];
    if (kind == Kind::kSigmoid) {
      for (size_t c = 0; c < classes; ++c) x[c] = 1.0f / (1.0f + std::exp(-x[c]));
    } else if (config_.apply_softmax) {
      Softmax(x, classes);
    }
    std::iota(order.begin(), order.end(), 0);
    auto better = [x](size_t a, size_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
    size_t keep = kind == Kind::kArgmax ? 1
                  : kind == Kind::kTopk ? std::min<size_t>(config_.k, classes)
                                   : classes;
    std::partial_sort(order.begin(), order.begin() + keep, order.end(), better);
    for (size_t j = 0; j < keep; ++j) {
      if (kind == Kind::kSigmoid && x[order[j]] < config_.threshold) break;
      out.push_back({LabelOf(order[j]), x[order[j]]});
    }
  }
  return Status::Ok();
}

}  // namespace inferd::pipeline
