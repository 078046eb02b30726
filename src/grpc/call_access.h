// The key check of a gRPC call (--auth-keys): the `authorization` metadata,
// `Bearer KEY` as over HTTP (auth/key_set.h). ServerLive and ServerReady
// stay open for probes (grpc_server.cc asks nothing of them); inference
// methods need an inference or management key, the repository extension a
// management key. No key or an unknown one: UNAUTHENTICATED; a known key of
// another kind: PERMISSION_DENIED. The messages never echo the key.
// Pure function of its arguments; any thread.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "auth/authorizer.h"

namespace inferd::grpc {

// OK when the call may go on.
::grpc::Status CheckCallAccess(const auth::Authorizer& keys, auth::Kind kind,
                               const ::grpc::ServerContext& context);

}  // namespace inferd::grpc
