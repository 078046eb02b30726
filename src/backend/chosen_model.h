// ChosenModel: a model that another backend loaded (an ONNX Runtime session
// of a file `inferd optimize` wrote), served in place of the TorchScript
// model because `precision: auto` chose it; it runs as that backend's Model
// and tells the choice (every candidate measured) as its execution report.
//
// Thread-safety: as the wrapped Model (Execute may be called concurrently);
// the report is fixed at construction. Ownership: holds the only reference
// the choice kept to the wrapped model.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"

namespace inferd::backend {

class ChosenModel : public Model {
 public:
  ChosenModel(std::shared_ptr<Model> served, ExecutionReport report)
      : served_(std::move(served)), report_(std::move(report)) {}

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    return served_->Execute(inputs);
  }
  ExecutionReport execution_report() const override { return report_; }
  int64_t WeightBytes() const override { return served_->WeightBytes(); }
  bool RunsWide() const override { return served_->RunsWide(); }

 private:
  const std::shared_ptr<Model> served_;
  const ExecutionReport report_;
};

}  // namespace inferd::backend
