// The handlers of GRPCInferenceService's methods, one per RPC, each called on
// a completion-queue thread when a call arrives and answering it once
// (internal/unary_call.h). They must not block that thread: inference goes
// through the scheduler, loads and unloads run on the repository's load threads.
// They reach the server through serving::Services (serving/services.h), the
// struct the HTTP routes get too; built by the serve command, it outlives
// every call. Thread-safety: handlers keep no state.
#pragma once

#include <functional>
#include <memory>

#include "grpc/internal/unary_call.h"
#include "grpc_predict_v2.grpc.pb.h"
#include "repository/model_repository.h"
#include "serving/inference_call.h"
#include "serving/services.h"

namespace inferd::grpc {

using AsyncService = inference::GRPCInferenceService::AsyncService;
template <typename Request, typename Response>
using Call = internal::UnaryCall<AsyncService, Request, Response>;
template <typename Request, typename Response>
using CallPtr = std::shared_ptr<Call<Request, Response>>;

void HandleServerLive(
    const serving::Services& services,
    const CallPtr<inference::ServerLiveRequest, inference::ServerLiveResponse>& call);
void HandleServerReady(
    const serving::Services& services,
    const CallPtr<inference::ServerReadyRequest, inference::ServerReadyResponse>& call);
void HandleModelReady(
    const serving::Services& services,
    const CallPtr<inference::ModelReadyRequest, inference::ModelReadyResponse>& call);
void HandleServerMetadata(
    const serving::Services& services,
    const CallPtr<inference::ServerMetadataRequest, inference::ServerMetadataResponse>& call);
void HandleModelMetadata(
    const serving::Services& services,
    const CallPtr<inference::ModelMetadataRequest, inference::ModelMetadataResponse>& call);
void HandleModelInfer(
    const serving::Services& services,
    const CallPtr<inference::ModelInferRequest, inference::ModelInferResponse>& call);

// The repository extension.
void HandleRepositoryIndex(
    const serving::Services& services,
    const CallPtr<inference::RepositoryIndexRequest, inference::RepositoryIndexResponse>& call);
void HandleRepositoryModelLoad(const serving::Services& services,
                               const CallPtr<inference::RepositoryModelLoadRequest,
                                             inference::RepositoryModelLoadResponse>& call);
void HandleRepositoryModelUnload(const serving::Services& services,
                                 const CallPtr<inference::RepositoryModelUnloadRequest,
                                               inference::RepositoryModelUnloadResponse>& call);

}  // namespace inferd::grpc
