// The model repository extension: RepositoryIndex answers at once; loads and
// unloads run on the repository's load threads, which answer when they end.
#include "grpc/handlers.h"
#include "grpc/status_conversion.h"
#include "serving/model_info.h"

namespace inferd::grpc {

using namespace inference;  // NOLINT: the generated message types

namespace {

// Answers a repository job's Status when it ends.
template <typename Request, typename Response>
repository::ModelRepository::DoneCallback AnswerWhenDone(const CallPtr<Request, Response>& call) {
  return [call](Status st) { call->Respond([st](Response*) { return ToGrpcStatus(st); }); };
}

}  // namespace

void HandleRepositoryIndex(const serving::Services& services,
                           const CallPtr<RepositoryIndexRequest, RepositoryIndexResponse>& call) {
  auto entries = serving::RepositoryIndex(services.repository->List(), call->request().ready());
  call->Respond([entries = std::move(entries)](RepositoryIndexResponse* r) {
    for (const auto& e : entries) {
      auto* m = r->add_models();
      m->set_name(e.name);
      m->set_version(e.version);
      m->set_state(std::string(repository::ModelStateName(e.state)));
      m->set_reason(e.reason);
    }
    return ::grpc::Status::OK;
  });
}

void HandleRepositoryModelLoad(
    const serving::Services& services,
    const CallPtr<RepositoryModelLoadRequest, RepositoryModelLoadResponse>& call) {
  services.repository->LoadAsync(call->request().model_name(), AnswerWhenDone(call));
}

void HandleRepositoryModelUnload(
    const serving::Services& services,
    const CallPtr<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>& call) {
  services.repository->UnloadAsync(call->request().model_name(), AnswerWhenDone(call));
}

}  // namespace inferd::grpc
