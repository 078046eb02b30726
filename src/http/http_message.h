// HttpRequest / HttpResponse: the protocol-level view that route handlers see,
// free of Boost.Beast types so that handlers and codecs are testable alone.
//
// A request's body is held by a shared_ptr so that tensors parsed from it may
// borrow its bytes (Tensor::Borrow) and keep it alive until the response.
// A Responder is called exactly once per request, from any thread (an executor
// thread, a loader thread); the connection runs `make` on its own network
// thread, so JSON writing never races the socket.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace inferd::http {

struct HttpRequest {
  std::string method;                        // GET, POST, ...
  std::string path;                          // percent-decoded, without the query
  std::map<std::string, std::string> query;  // percent-decoded
  std::string content_type;                  // as sent; may be empty
  // Inference-Header-Content-Length (v2 binary tensor extension), when sent.
  std::optional<std::string> inference_header_length;
  // X-Request-Timeout-Ms, the TorchServe API's per-request deadline, parsed
  // once when the head is read (ParseRequestTimeout, request_head.h): none
  // when not sent, else the deadline, or the kInvalidArgument that
  // /predictions answers a malformed one with (the v2 routes ignore it).
  std::optional<StatusOr<TimePoint>> timeout_deadline;
  std::shared_ptr<std::string> body = std::make_shared<std::string>();
  // Flipped by the connection when the client goes away (best effort).
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  TimePoint received{};  // when the whole request had been read
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using ResponseMaker = std::function<HttpResponse()>;
using Responder = std::function<void(ResponseMaker make)>;

// Convenience: a responder that answers `response` as is.
inline void Reply(const Responder& respond, HttpResponse response) {
  respond([r = std::move(response)]() mutable { return std::move(r); });
}

}  // namespace inferd::http
