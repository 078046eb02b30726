// The one place where inferd::StatusCode becomes a protocol's status: an HTTP
// status for http/, a gRPC status code for grpc/ (as its canonical number, so
// that this folder needs no gRPC header; grpc/ checks the numbers against
// grpc::StatusCode at compile time).
//
//   code                 HTTP  gRPC
//   kOk                  200   OK
//   kInvalidArgument     400   INVALID_ARGUMENT
//   kFailedPrecondition  400   FAILED_PRECONDITION
//   kNotFound            404   NOT_FOUND
//   kPayloadTooLarge     413   INVALID_ARGUMENT (not RESOURCE_EXHAUSTED: a client
//                              must not retry an oversized image as if the queue were full)
//   kResourceExhausted   429   RESOURCE_EXHAUSTED (queue full)
//   kCancelled           499   CANCELLED (499: nginx's code; the client is gone)
//   kInternal            500   INTERNAL
//   kUnavailable         503   UNAVAILABLE (not ready, draining)
//   kDeadlineExceeded    504   DEADLINE_EXCEEDED
// Pure functions; any thread.
#pragma once

#include "common/status.h"

namespace inferd::serving {

int HttpStatusFor(StatusCode code);

// gRPC's canonical status codes (grpc/status.h, google.rpc.Code) that inferd answers.
enum class GrpcCode : int {
  kOk = 0,
  kCancelled = 1,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kInternal = 13,
  kUnavailable = 14,
};
GrpcCode GrpcCodeFor(StatusCode code);

}  // namespace inferd::serving
