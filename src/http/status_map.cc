#include "http/status_map.h"

#include <string>

#include "common/json_writer.h"

namespace inferd::http {

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
