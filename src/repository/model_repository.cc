#include "repository/model_repository.h"

#include <future>

#include "repository/internal/lifecycle.h"
#include "repository/memory_budget.h"

namespace inferd::repository {

class ModelRepository::Impl : public internal::Lifecycle {
 public:
  using Lifecycle::Lifecycle;
};

StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Create(const Options& options) {
  if (!options.backend || !options.scheduler) {
    return InvalidArgument("the model repository needs a backend and a scheduler");
  }
  if (!options.clock) return InvalidArgument("the model repository needs a clock");
  if (options.load_threads < 1) {
    return InvalidArgument("--load-threads must be at least 1, got " +
                           std::to_string(options.load_threads));
  }
  if (options.memory_budget < 0) return InvalidArgument("the memory budget must not be negative");
  Options o = options;
  if (!o.resident_bytes) o.resident_bytes = [] { return ReadResidentBytes(); };
  if (!o.peak_resident_bytes) o.peak_resident_bytes = [] { return TakePeakResidentBytes(); };
  auto impl = std::make_shared<Impl>(std::move(o));
  RETURN_IF_ERROR(impl->Init());
  auto repo = std::unique_ptr<ModelRepository>(new ModelRepository(std::move(impl)));
  repo->on_load_asked_ = options.on_load_asked;
  return repo;
}

ModelRepository::ModelRepository(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelRepository::~ModelRepository() { impl_->Shutdown(); }

void ModelRepository::StartEagerLoads() { impl_->StartEagerLoads(); }
bool ModelRepository::WaitForStartup(TimePoint deadline) { return impl_->WaitForStartup(deadline); }
bool ModelRepository::AllReady() const { return impl_->AllReady(); }

void ModelRepository::Acquire(const std::string& model, std::optional<int64_t> version,
                              TimePoint deadline, AcquireCallback done) {
  impl_->Acquire(model, version, deadline, std::move(done));
}

StatusOr<ModelHandle> ModelRepository::Get(const std::string& model,
                                           std::optional<int64_t> version) const {
  return impl_->Get(model, version);
}

void ModelRepository::LoadAsync(const std::string& model, DoneCallback done) {
  if (on_load_asked_) on_load_asked_(model);
  impl_->Load(model, std::move(done));
}

void ModelRepository::UnloadAsync(const std::string& model, DoneCallback done) {
  impl_->Unload(model, std::move(done));
}

Status ModelRepository::Load(const std::string& model) {
  if (on_load_asked_) on_load_asked_(model);
  std::promise<Status> result;
  impl_->Load(model, [&result](Status st) { result.set_value(std::move(st)); });
  return result.get_future().get();
}

Status ModelRepository::Unload(const std::string& model) {
  std::promise<Status> result;
  impl_->Unload(model, [&result](Status st) { result.set_value(std::move(st)); });
  return result.get_future().get();
}

Status ModelRepository::Quarantine(const std::string& model, int64_t version,
                                   const std::string& reason) {
  return impl_->Quarantine(model, version, reason);
}

std::vector<ModelStatus> ModelRepository::List() const { return impl_->List(); }

StatusOr<ModelStatus> ModelRepository::GetStatus(const std::string& model) const {
  return impl_->GetStatus(model);
}

ModelRepository::MemoryUse ModelRepository::memory() const { return impl_->memory(); }

}  // namespace inferd::repository
