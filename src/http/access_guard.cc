#include "http/access_guard.h"

#include <string>

#include "http/router.h"
#include "http/status_map.h"

namespace inferd::http {
namespace {

// The probes' routes on the inference port (the router ignores a trailing slash).
bool IsHealthPath(std::string_view path) {
  const std::vector<std::string_view> s = SplitPath(path);
  if (s.size() == 1) return s[0] == "ping";
  return s.size() == 3 && s[0] == "v2" && s[1] == "health" && (s[2] == "live" || s[2] == "ready");
}

std::string KeysFor(auth::Kind kind) {
  switch (kind) {
    case auth::Kind::kInference:
      return "an inference or management key";
    case auth::Kind::kManagement:
      return "a management key";
    case auth::Kind::kMetrics:
      return "a metrics or management key";
  }
  return "a key";
}

}  // namespace

std::optional<HttpResponse> AccessGuard::Check(std::string_view path,
                                               std::string_view authorization) const {
  if (kind_ == auth::Kind::kInference && IsHealthPath(path)) return std::nullopt;
  if (kind_ == auth::Kind::kMetrics && !keys_->metrics_protected()) return std::nullopt;
  switch (keys_->Authorize(kind_, authorization)) {
    case auth::Decision::kAllow:
      return std::nullopt;
    case auth::Decision::kUnauthenticated:
      return UnauthenticatedResponse(kind_);
    case auth::Decision::kForbidden:
      return ForbiddenResponse(kind_);
  }
  return UnauthenticatedResponse(kind_);
}

HttpResponse UnauthenticatedResponse(auth::Kind kind) {
  HttpResponse r = JsonResponse(
      401, ErrorJson("missing or unknown API key: send 'Authorization: Bearer KEY' with " +
                     KeysFor(kind) + " of the server's --auth-keys file"));
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"inferd\"");
  return r;
}

HttpResponse ForbiddenResponse(auth::Kind kind) {
  return JsonResponse(403, ErrorJson("this API key may not call " +
                                     std::string(auth::KindName(kind)) + " routes: they need " +
                                     KeysFor(kind)));
}

}  // namespace inferd::http
