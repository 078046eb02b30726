#include "http/status_map.h"

#include <string>

#include "common/json_writer.h"

namespace inferd::http {

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

HttpResponse ErrorResponse(const Status& status) {
  HttpResponse r;
  r.status = HttpStatusFor(status.code());
  r.body = ErrorJson(status.message());
  if (status.code() == StatusCode::kResourceExhausted) {
    r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterSeconds));
  }
  return r;
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string ErrorJson(std::string_view message) {
  std::string out = "{\"error\":";
  AppendJsonString(out, message);
  out += '}';
  return out;
}

}  // namespace inferd::http
