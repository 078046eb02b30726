#include "backend/xgboost/xgboost_model.h"

#include <spdlog/spdlog.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "backend/model_file.h"
#include "common/text_format.h"

namespace inferd::backend {
namespace {

std::string LastError() {
  const char* e = XGBGetLastError();
  return e && *e ? e : "unknown XGBoost error";
}

// The __array_interface__ (version 3) of a dense row-major float matrix,
// which in-place prediction reads without copying.
std::string ArrayInterface(const float* values, int64_t rows, int64_t cols) {
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                R"({"data": [%llu, true], "shape": [%lld, %lld], "typestr": "<f4", "version": 3})",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(values)),
                static_cast<long long>(rows), static_cast<long long>(cols));
  return buf;
}

// Plain prediction (type 0: what predict() gives, probabilities for
// softprob) over every tree, NaN as missing, as python3-xgboost's
// Booster.inplace_predict does by default.
constexpr char kPredictConfig[] =
    R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
    R"("strict_shape": false, "missing": NaN, "cache_id": 0})";

}  // namespace

XGBoostModel::XGBoostModel(void* booster, config::ModelConfig config, int64_t features,
                           int64_t file_bytes)
    : booster_(booster), config_(std::move(config)), features_(features), file_bytes_(file_bytes) {}

XGBoostModel::~XGBoostModel() { XGBoosterFree(booster_); }

StatusOr<std::shared_ptr<XGBoostModel>> XGBoostModel::Load(const LoadOptions& load,
                                                           const Options& options) {
  const config::ModelConfig& c = load.config;
  const std::string& path = load.model_path;
  const std::string where = "model " + Quoted(c.name) + ": ";
  if (c.inputs.size() != 1 || c.inputs[0].dtype != DataType::kFp32 ||
      c.inputs[0].dims.size() != 1 || c.inputs[0].dims[0] < 1) {
    return InvalidArgument(where +
                           "inputs: the xgboost backend takes one FP32 input of shape "
                           "[features] (a fixed count)");
  }
  if (c.outputs.size() > 1) {
    return InvalidArgument(where + "outputs: the xgboost backend gives one output, got " +
                           std::to_string(c.outputs.size()));
  }
  if (!c.outputs.empty() && c.outputs[0].dtype != DataType::kFp32) {
    return InvalidArgument(where + "outputs[0].datatype: XGBoost predicts FP32");
  }
  ASSIGN_OR_RETURN(const int64_t file_bytes, ModelFileBytes(load));
  const auto start = std::chrono::steady_clock::now();

  BoosterHandle handle = nullptr;
  if (XGBoosterCreate(nullptr, 0, &handle) != 0) {
    return Internal(where + "XGBoosterCreate: " + LastError());
  }
  std::shared_ptr<XGBoostModel> model(new XGBoostModel(handle, c, c.inputs[0].dims[0], file_bytes));
  if (XGBoosterLoadModel(handle, path.c_str()) != 0) {
    return InvalidArgument(where + "cannot load " + Quoted(path) +
                           " as an XGBoost model: " + LastError());
  }
  const std::string threads = std::to_string(std::max(1, options.threads));
  if (XGBoosterSetParam(handle, "nthread", threads.c_str()) != 0) {
    return Internal(where + "cannot set nthread: " + LastError());
  }
  bst_ulong features = 0;
  if (XGBoosterGetNumFeature(handle, &features) != 0) {
    return InvalidArgument(where + Quoted(path) + ": " + LastError());
  }
  if (static_cast<int64_t>(features) != model->features_) {
    return InvalidArgument(where + "inputs[0].shape: [" + std::to_string(model->features_) +
                           "] in config.yaml, but the model in " + Quoted(path) + " has " +
                           std::to_string(features) + " features");
  }

  // One prediction on zeros tells the output's size per item.
  const std::vector<float> zeros(static_cast<size_t>(model->features_), 0.0f);
  ASSIGN_OR_RETURN(std::vector<float> probe, model->Predict(zeros.data(), 1));
  const int64_t per_item = static_cast<int64_t>(probe.size());
  if (c.outputs.empty()) {
    model->output_name_ = "output0";
    model->output_dims_ = {per_item};
  } else {
    model->output_name_ = c.outputs[0].name;
    model->output_dims_ = c.outputs[0].dims;
    Shape fixed = model->output_dims_;
    for (int64_t& d : fixed) d = d < 0 ? per_item : d;
    if (NumElements(fixed) != per_item) {
      return InvalidArgument(where + "outputs[0].shape: " + ShapeToString(c.outputs[0].dims) +
                             " in config.yaml, but the model predicts " + std::to_string(per_item) +
                             " value(s) per item");
    }
    model->output_dims_ = fixed;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  spdlog::info(
      "model '{}': loaded {} in {} ms (xgboost, {} features, {} value(s) per item, {} "
      "thread(s))",
      c.name, path, ms, model->features_, per_item, threads);
  return model;
}

StatusOr<std::vector<float>> XGBoostModel::Predict(const float* values, int64_t rows) const {
  const std::string array = ArrayInterface(values, rows, features_);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDense(booster_, array.c_str(), kPredictConfig, nullptr, &shape, &dims,
                                &result) != 0) {
    return Internal("model " + Quoted(config_.name) +
                    ": XGBoost prediction failed: " + LastError());
  }
  size_t count = 1;
  for (bst_ulong i = 0; i < dims; ++i) count *= shape[i];
  if (dims == 0 || shape[0] != static_cast<bst_ulong>(rows) || count % rows != 0) {
    return Internal("model " + Quoted(config_.name) +
                    ": XGBoost predicted a result whose first dimension is not the batch");
  }
  return std::vector<float>(result, result + count);
}

StatusOr<std::vector<NamedTensor>> XGBoostModel::Execute(const std::vector<NamedTensor>& inputs) {
  if (inputs.size() != 1) {
    return InvalidArgument("model " + Quoted(config_.name) + " takes one input, got " +
                           std::to_string(inputs.size()));
  }
  const Tensor& x = inputs[0].tensor;
  if (x.dtype() != DataType::kFp32 || x.shape().size() != 2 || x.shape()[1] != features_) {
    return InvalidArgument("model " + Quoted(config_.name) + ": input '" + inputs[0].name +
                           "' must be FP32 [batch, " + std::to_string(features_) + "], got " +
                           std::string(DataTypeName(x.dtype())) + " " + ShapeToString(x.shape()));
  }
  const int64_t rows = x.shape()[0];
  Shape shape = {rows};
  shape.insert(shape.end(), output_dims_.begin(), output_dims_.end());
  if (rows == 0)
    return std::vector<NamedTensor>{{output_name_, Tensor::Allocate(DataType::kFp32, shape)}};
  ASSIGN_OR_RETURN(std::vector<float> values, Predict(x.data_as<float>(), rows));
  if (static_cast<int64_t>(values.size()) != NumElements(shape)) {
    return Internal("model " + Quoted(config_.name) + ": XGBoost predicted " +
                    std::to_string(values.size()) + " values for " + ShapeToString(shape));
  }
  Tensor out = Tensor::AllocateUninitialized(DataType::kFp32, shape);
  std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(float));
  return std::vector<NamedTensor>{{output_name_, std::move(out)}};
}

}  // namespace inferd::backend
