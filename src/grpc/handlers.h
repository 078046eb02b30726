// The handlers of GRPCInferenceService's methods, one per RPC, each called on
// a completion-queue thread when a call arrives and answering it once
// (internal/unary_call.h). They must not block that thread: inference goes
// through the scheduler, loads and unloads run on the repository's load threads.
// Thread-safety: ServiceContext is read-only once built; handlers keep no state.
#pragma once

#include <functional>
#include <memory>

#include "grpc/internal/unary_call.h"
#include "grpc_predict_v2.grpc.pb.h"
#include "repository/model_repository.h"
#include "serving/inference_call.h"

namespace inferd::grpc {

// What the handlers share; built by GrpcServer, outlives every call.
struct ServiceContext {
  serving::Services serving;    // repository and request metrics
  std::function<bool()> ready;  // server ready (models loaded, not draining); empty = ready
};

using AsyncService = inference::GRPCInferenceService::AsyncService;
template <typename Request, typename Response>
using Call = internal::UnaryCall<AsyncService, Request, Response>;
template <typename Request, typename Response>
using CallPtr = std::shared_ptr<Call<Request, Response>>;

void HandleServerLive(
    const ServiceContext& ctx,
    const CallPtr<inference::ServerLiveRequest, inference::ServerLiveResponse>& call);
void HandleServerReady(
    const ServiceContext& ctx,
    const CallPtr<inference::ServerReadyRequest, inference::ServerReadyResponse>& call);
void HandleModelReady(
    const ServiceContext& ctx,
    const CallPtr<inference::ModelReadyRequest, inference::ModelReadyResponse>& call);
void HandleServerMetadata(
    const ServiceContext& ctx,
    const CallPtr<inference::ServerMetadataRequest, inference::ServerMetadataResponse>& call);
void HandleModelMetadata(
    const ServiceContext& ctx,
    const CallPtr<inference::ModelMetadataRequest, inference::ModelMetadataResponse>& call);
void HandleModelInfer(
    const ServiceContext& ctx,
    const CallPtr<inference::ModelInferRequest, inference::ModelInferResponse>& call);

// The repository extension.
void HandleRepositoryIndex(
    const ServiceContext& ctx,
    const CallPtr<inference::RepositoryIndexRequest, inference::RepositoryIndexResponse>& call);
void HandleRepositoryModelLoad(const ServiceContext& ctx,
                               const CallPtr<inference::RepositoryModelLoadRequest,
                                             inference::RepositoryModelLoadResponse>& call);
void HandleRepositoryModelUnload(const ServiceContext& ctx,
                                 const CallPtr<inference::RepositoryModelUnloadRequest,
                                               inference::RepositoryModelUnloadResponse>& call);

}  // namespace inferd::grpc
