#include "grpc/call_access.h"

#include <string>

namespace inferd::grpc {

::grpc::Status CheckCallAccess(const auth::Authorizer& keys, auth::Kind kind,
                               const ::grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  const std::string_view header =
      it == metadata.end() ? std::string_view() : std::string_view(it->second.data(), it->second.size());
  const std::string needs = kind == auth::Kind::kManagement
                                ? "a management key"
                                : "an inference or management key";
  switch (keys.Authorize(kind, header)) {
    case auth::Decision::kAllow:
      return ::grpc::Status::OK;
    case auth::Decision::kUnauthenticated:
      return ::grpc::Status(::grpc::StatusCode::UNAUTHENTICATED,
                            "missing or unknown API key: send the metadata 'authorization: Bearer "
                            "KEY' with " + needs + " of the server's --auth-keys file");
    case auth::Decision::kForbidden:
      return ::grpc::Status(::grpc::StatusCode::PERMISSION_DENIED,
                            "this API key may not call " + std::string(auth::KindName(kind)) +
                                " methods: they need " + needs);
  }
  return ::grpc::Status(::grpc::StatusCode::UNAUTHENTICATED, "missing or unknown API key");
}

}  // namespace inferd::grpc
