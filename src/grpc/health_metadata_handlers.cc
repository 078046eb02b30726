// ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata: answered
// at once on the queue's thread.
#include "grpc/handlers.h"
#include "grpc/status_conversion.h"
#include "serving/call.h"
#include "serving/model_info.h"

namespace inferd::grpc {

using namespace inference;  // NOLINT: the generated message types

void HandleServerLive(const serving::Services&,
                      const CallPtr<ServerLiveRequest, ServerLiveResponse>& call) {
  call->Respond([](ServerLiveResponse* r) {
    r->set_live(true);
    return ::grpc::Status::OK;
  });
}

void HandleServerReady(const serving::Services& services,
                       const CallPtr<ServerReadyRequest, ServerReadyResponse>& call) {
  bool ready = !services.ready || services.ready();
  call->Respond([ready](ServerReadyResponse* r) {
    r->set_ready(ready);
    return ::grpc::Status::OK;
  });
}

// ready=false for a known model that is not ready (loading, failed,
// unloaded); NOT_FOUND for an unknown model or version.
void HandleModelReady(const serving::Services& services,
                      const CallPtr<ModelReadyRequest, ModelReadyResponse>& call) {
  const ModelReadyRequest& req = call->request();
  Status st;
  auto version = serving::ParseModelVersion(req.version());
  if (!version.ok()) {
    st = version.status();
  } else {
    st = services.repository->Get(req.name(), *version).status();
  }
  bool ready = st.ok();
  if (st.code() == StatusCode::kUnavailable) st = Status::Ok();
  call->Respond([ready, st](ModelReadyResponse* r) {
    r->set_ready(ready);
    return ToGrpcStatus(st);
  });
}

void HandleServerMetadata(const serving::Services&,
                          const CallPtr<ServerMetadataRequest, ServerMetadataResponse>& call) {
  call->Respond([](ServerMetadataResponse* r) {
    r->set_name(serving::kServerName);
    r->set_version(serving::kServerVersion);
    for (const auto& e : serving::ServerExtensions()) r->add_extensions(e);
    return ::grpc::Status::OK;
  });
}

void HandleModelMetadata(const serving::Services& services,
                         const CallPtr<ModelMetadataRequest, ModelMetadataResponse>& call) {
  const ModelMetadataRequest& req = call->request();
  StatusOr<serving::ModelMetadata> meta = [&]() -> StatusOr<serving::ModelMetadata> {
    ASSIGN_OR_RETURN(auto version, serving::ParseModelVersion(req.version()));
    ASSIGN_OR_RETURN(auto status, services.repository->GetStatus(req.name()));
    return serving::DescribeModel(status, version);
  }();
  call->Respond([meta = std::move(meta)](ModelMetadataResponse* r) {
    if (!meta.ok()) return ToGrpcStatus(meta.status());
    r->set_name(meta->name);
    for (int64_t v : meta->versions) r->add_versions(std::to_string(v));
    r->set_platform(meta->platform);
    auto fill = [](const serving::TensorMetadata& t, ModelMetadataResponse::TensorMetadata* out) {
      out->set_name(t.name);
      out->set_datatype(std::string(DataTypeName(t.datatype)));
      for (int64_t d : t.shape) out->add_shape(d);
    };
    for (const auto& t : meta->inputs) fill(t, r->add_inputs());
    for (const auto& t : meta->outputs) fill(t, r->add_outputs());
    return ::grpc::Status::OK;
  });
}

}  // namespace inferd::grpc
