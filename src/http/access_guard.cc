#include "http/access_guard.h"

#include <algorithm>
#include <array>
#include <string>

#include "http/dashboard_routes.h"
#include "http/request_head.h"
#include "http/status_map.h"

namespace inferd::http {
namespace {

// Whether the target's path is one of `paths`, as the router would match it
// (percent-decoded, a trailing slash ignored). No allocation unless the
// target is percent-encoded: this runs on every request.
template <size_t N>
bool TargetIsOneOf(std::string_view target, const std::array<std::string_view, N>& paths) {
  std::string decoded;
  std::string_view path = target.substr(0, target.find('?'));
  if (path.find('%') != std::string_view::npos) {
    HttpRequest req;
    SplitTarget(target, req);
    decoded = std::move(req.path);
    path = decoded;
  }
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

// The probes' routes on the inference port.
constexpr std::array<std::string_view, 3> kHealthPaths = {"/ping", "/v2/health/live",
                                                          "/v2/health/ready"};

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

std::optional<HttpResponse> AccessGuard::Check(std::string_view method, std::string_view target,
                                               std::string_view authorization) const {
  if (kind_ == auth::Kind::kInference && TargetIsOneOf(target, kHealthPaths)) return std::nullopt;
  // The dashboard page carries no data; a browser navigating to it cannot
  // send a Bearer header, so it must load in order to ask for a key. GET
  // only: a request with a body still needs a key before its body is read.
  if (kind_ == auth::Kind::kManagement && method == "GET" &&
      TargetIsOneOf(target, kDashboardPagePaths)) {
    return std::nullopt;
  }
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
