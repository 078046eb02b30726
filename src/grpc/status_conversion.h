// inferd::Status as a gRPC status: the code from serving/status_codes.h (the
// one map for every protocol), the message unchanged. Pure; any thread.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace inferd::grpc {

::grpc::Status ToGrpcStatus(const Status& status);

}  // namespace inferd::grpc
