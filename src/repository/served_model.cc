#include "repository/model_repository.h"

namespace inferd::repository {

ServedModel::ServedModel(config::ModelConfig config, int64_t version, std::string dir,
                         std::shared_ptr<backend::Model> model,
                         std::shared_ptr<scheduler::ModelQueue> queue,
                         scheduler::Scheduler* scheduler)
    : config_(std::move(config)),
      version_(version),
      dir_(std::move(dir)),
      model_(std::move(model)),
      queue_(std::move(queue)),
      scheduler_(scheduler) {}

ServedModel::~ServedModel() { Retire(); }

void ServedModel::Retire() { scheduler_->RemoveModel(queue_); }

Status ServedModel::Enqueue(scheduler::InferenceRequest request, scheduler::Completion done) {
  return scheduler_->Enqueue(*queue_, std::move(request), std::move(done));
}

size_t ServedModel::QueueDepth() const { return scheduler_->QueueDepth(*queue_); }

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kUnloaded: return "UNAVAILABLE";
    case ModelState::kLoading: return "LOADING";
    case ModelState::kReady: return "READY";
    case ModelState::kFailed: return "FAILED";
  }
  return "UNKNOWN";
}

}  // namespace inferd::repository
