// The one place where inferd::StatusCode becomes an HTTP status, and where
// error responses get their JSON shape {"error": "..."}.
//
// 400 invalid argument / failed precondition, 404 not found, 413 payload too
// large, 429 resource exhausted (with Retry-After), 503 unavailable, 504
// deadline exceeded, 499 cancelled (client closed; nginx's code, rarely seen
// since the client is gone), 500 internal. Pure functions; any thread.
#pragma once

#include "common/status.h"
#include "http/http_message.h"

namespace inferd::http {

int HttpStatusFor(StatusCode code);
// Seconds a client should wait after a 429 before retrying.
inline constexpr int kRetryAfterSeconds = 1;

// The error response for a non-OK status: JSON body, mapped code, Retry-After on 429.
HttpResponse ErrorResponse(const Status& status);
// A JSON response with the given status and body text.
HttpResponse JsonResponse(int status, std::string body);

// {"error": message}
std::string ErrorJson(std::string_view message);

}  // namespace inferd::http
