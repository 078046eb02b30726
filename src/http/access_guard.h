// AccessGuard: which API key a port's routes need (--auth-keys), checked on
// the request's header before its body is read, so that a client without a
// key cannot make the server read and hold a large body.
//
//   inference port   /ping, /v2/health/live, /v2/health/ready: open (probes);
//                    everything else: an inference or management key
//   management port  GET of the dashboard page's own files (/, /dashboard,
//                    /dashboard/dashboard.css, /dashboard/dashboard.js: no
//                    data in them; http/dashboard_routes.h): open, so that a
//                    browser can load the page and ask for a key;
//                    everything else (/dashboard/state, /models...): a
//                    management key
//   metrics port     /metrics: open, unless the key file lists metrics keys
//                    (then a metrics or management key)
//
// 401 (no key, not Bearer, unknown key) carries `WWW-Authenticate: Bearer`;
// 403 is a known key of another kind. Neither echoes the key.
// Thread-safety: immutable after construction; Check from any thread.
#pragma once

#include <optional>
#include <string_view>

#include "auth/authorizer.h"
#include "http/http_message.h"

namespace inferd::http {

class AccessGuard {
 public:
  // `keys` must outlive the guard. `kind`: what the port's routes need.
  AccessGuard(const auth::Authorizer* keys, auth::Kind kind) : keys_(keys), kind_(kind) {}

  // nullopt: may go on; else the 401/403 answer. `method`, `target`: the
  // request line's (path and query, percent-encoded as sent).
  std::optional<HttpResponse> Check(std::string_view method, std::string_view target,
                                    std::string_view authorization) const;

 private:
  const auth::Authorizer* keys_;
  auth::Kind kind_;
};

// The answers, also for tests: 401 with WWW-Authenticate, 403.
HttpResponse UnauthenticatedResponse(auth::Kind kind);
HttpResponse ForbiddenResponse(auth::Kind kind);

}  // namespace inferd::http
