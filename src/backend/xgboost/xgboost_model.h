// XGBoostModel: one loaded XGBoost booster (model.json or model.ubj), shared
// by every executor that runs it.
//
// The config names one FP32 input `[features]` per item; Execute predicts the
// whole batch in one call (XGBoosterPredictFromDense, in place: no DMatrix
// copy), missing values as NaN. The one output is what XGBoost's predict
// gives per item: the class probabilities for `multi:softprob`, the
// probability for `binary:logistic`, the value for a regression; its size is
// found at load by a prediction on zeros and must match the config's output
// shape (named `output0` when the config lists none).
//
// Thread-safety: Execute may be called concurrently from several threads:
// in-place prediction is thread-safe in XGBoost >= 1.4 (each thread gets its
// own result buffer). The booster's thread count is fixed at load.
// Ownership: the model owns its booster and frees it on destruction. No
// XGBoost header appears here (only xgboost_model.cc includes c_api.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace inferd::backend {

class XGBoostModel : public Model {
 public:
  struct Options {
    int threads = 1;  // XGBoost's nthread: intra-op threads of each prediction
  };

  // kInvalidArgument naming the file or the config key when the model file
  // is missing or unreadable, or the config does not fit the booster
  // (features, output size).
  static StatusOr<std::shared_ptr<XGBoostModel>> Load(const LoadOptions& load,
                                                      const Options& options);
  ~XGBoostModel() override;

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;
  int64_t WeightBytes() const override { return file_bytes_; }

 private:
  XGBoostModel(void* booster, config::ModelConfig config, int64_t features, int64_t file_bytes);

  // Predicts `rows` x features_ floats; the results, rows x per-item values.
  StatusOr<std::vector<float>> Predict(const float* values, int64_t rows) const;

  void* const booster_;  // BoosterHandle
  const config::ModelConfig config_;
  const int64_t features_;
  const int64_t file_bytes_;  // the serialized trees: what the booster holds
  std::string output_name_;
  Shape output_dims_;  // per item
};

}  // namespace inferd::backend
