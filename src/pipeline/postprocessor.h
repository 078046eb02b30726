// Postprocessor: a classifier's output tensor -> labels with scores, per batch item.
//
// Kinds (`postprocess.kind`):
//   topk     softmax (unless apply_softmax: false), then the k best {label, score},
//            best first: TorchServe's image-classifier answer.
//   argmax   the best class only (its softmax probability, or its raw value
//            with apply_softmax: false).
//   sigmoid  multi-label: every class whose sigmoid is >= threshold, best first.
//   softmax  rewrites the first output as probabilities (FP32); no labels.
// Labels come from `labels` (one per line, relative to the model dir); without
// it a class is named by its index. The first output of the model is used.
// Create reads and checks the labels file once; Run is const and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/model_config.h"
#include "scheduler/inference_request.h"

namespace inferd::pipeline {

class Postprocessor {
 public:
  // kFailedPrecondition for a bad kind, an unreadable labels file or a labels
  // count that differs from the first output's class count.
  static StatusOr<std::unique_ptr<Postprocessor>> Create(const config::ModelConfig& config,
                                                         const std::string& model_dir);

  Status Run(scheduler::InferenceResponse* response) const;

  const std::vector<std::string>& labels() const { return labels_; }

 private:
  Postprocessor() = default;
  std::string LabelOf(size_t index) const;

  config::PostprocessConfig config_;
  std::vector<std::string> labels_;
};

// Reads a labels file: one label per line, '\r' stripped, trailing empty lines dropped.
StatusOr<std::vector<std::string>> ReadLabels(const std::string& path);

}  // namespace inferd::pipeline
