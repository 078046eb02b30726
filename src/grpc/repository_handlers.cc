// The model repository extension: RepositoryIndex answers at once; loads and
// unloads block, so they run on the server's loader thread and answer from
// there.
#include "grpc/handlers.h"
#include "grpc/status_conversion.h"
#include "serving/model_info.h"

namespace inferd::grpc {

using namespace inference;  // NOLINT: the generated message types

namespace {

// Runs `job` off the queue thread; answers its Status.
template <typename Request, typename Response>
void RunRepositoryJob(const ServiceContext& ctx, const CallPtr<Request, Response>& call,
                      std::function<Status()> job) {
  auto work = [call, job = std::move(job)] {
    Status st = job();
    call->Respond([st](Response*) { return ToGrpcStatus(st); });
  };
  if (ctx.run_blocking) {
    ctx.run_blocking(std::move(work));
  } else {
    work();
  }
}

}  // namespace

void HandleRepositoryIndex(const ServiceContext& ctx,
                           const CallPtr<RepositoryIndexRequest, RepositoryIndexResponse>& call) {
  auto entries = serving::RepositoryIndex(ctx.serving.repository->List(), call->request().ready());
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
    const ServiceContext& ctx,
    const CallPtr<RepositoryModelLoadRequest, RepositoryModelLoadResponse>& call) {
  auto* repo = ctx.serving.repository;
  std::string name = call->request().model_name();
  RunRepositoryJob(ctx, call, [repo, name] { return repo->Load(name); });
}

void HandleRepositoryModelUnload(
    const ServiceContext& ctx,
    const CallPtr<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>& call) {
  auto* repo = ctx.serving.repository;
  std::string name = call->request().model_name();
  RunRepositoryJob(ctx, call, [repo, name] { return repo->Unload(name); });
}

}  // namespace inferd::grpc
