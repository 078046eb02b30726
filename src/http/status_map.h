// Where error responses get their JSON shape {"error": "..."} and their HTTP
// status, which serving/status_codes.h (the one map for every protocol) gives:
// 400 invalid argument / failed precondition, 404 not found, 413 payload too
// large, 429 resource exhausted (with Retry-After), 503 unavailable, 504
// deadline exceeded, 499 cancelled, 500 internal. Pure functions; any thread.
#pragma once

#include "common/status.h"
#include "http/http_message.h"
#include "serving/status_codes.h"

namespace inferd::http {

using serving::HttpStatusFor;

// Seconds a client should wait after a 429 before retrying.
inline constexpr int kRetryAfterSeconds = 1;

// The error response for a non-OK status: JSON body, mapped code, Retry-After on 429.
HttpResponse ErrorResponse(const Status& status);
// A JSON response with the given status and body text.
HttpResponse JsonResponse(int status, std::string body);

// {"error": message}
std::string ErrorJson(std::string_view message);

}  // namespace inferd::http
