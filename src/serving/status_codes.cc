#include "serving/status_codes.h"

namespace inferd::serving {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPayloadTooLarge:
      return 413;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
  }
  return 500;
}

GrpcCode GrpcCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return GrpcCode::kOk;
    case StatusCode::kInvalidArgument:
      return GrpcCode::kInvalidArgument;
    case StatusCode::kFailedPrecondition:
      return GrpcCode::kFailedPrecondition;
    case StatusCode::kNotFound:
      return GrpcCode::kNotFound;
    case StatusCode::kPayloadTooLarge:
      return GrpcCode::kInvalidArgument;
    case StatusCode::kResourceExhausted:
      return GrpcCode::kResourceExhausted;
    case StatusCode::kCancelled:
      return GrpcCode::kCancelled;
    case StatusCode::kInternal:
      return GrpcCode::kInternal;
    case StatusCode::kUnavailable:
      return GrpcCode::kUnavailable;
    case StatusCode::kDeadlineExceeded:
      return GrpcCode::kDeadlineExceeded;
  }
  return GrpcCode::kInternal;
}

}  // namespace inferd::serving
