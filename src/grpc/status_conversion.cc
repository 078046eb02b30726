#include "grpc/status_conversion.h"

#include "serving/status_codes.h"

namespace inferd::grpc {
namespace {

using serving::GrpcCode;

constexpr bool Same(GrpcCode ours, ::grpc::StatusCode theirs) {
  return static_cast<int>(ours) == static_cast<int>(theirs);
}
static_assert(Same(GrpcCode::kOk, ::grpc::StatusCode::OK));
static_assert(Same(GrpcCode::kCancelled, ::grpc::StatusCode::CANCELLED));
static_assert(Same(GrpcCode::kInvalidArgument, ::grpc::StatusCode::INVALID_ARGUMENT));
static_assert(Same(GrpcCode::kDeadlineExceeded, ::grpc::StatusCode::DEADLINE_EXCEEDED));
static_assert(Same(GrpcCode::kNotFound, ::grpc::StatusCode::NOT_FOUND));
static_assert(Same(GrpcCode::kResourceExhausted, ::grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(Same(GrpcCode::kFailedPrecondition, ::grpc::StatusCode::FAILED_PRECONDITION));
static_assert(Same(GrpcCode::kInternal, ::grpc::StatusCode::INTERNAL));
static_assert(Same(GrpcCode::kUnavailable, ::grpc::StatusCode::UNAVAILABLE));

}  // namespace

::grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return ::grpc::Status::OK;
  return ::grpc::Status(static_cast<::grpc::StatusCode>(serving::GrpcCodeFor(status.code())),
                        status.message());
}

}  // namespace inferd::grpc
