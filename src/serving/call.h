// Call: what the request path knows of one request besides its payload,
// whatever protocol carried it. Filled by a front end (http/, grpc/) on its
// network thread; copied into the completion, so it holds only values and
// shared state. Plain data; the is_cancelled function may be called from any
// thread.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace inferd::serving {

enum class Protocol { kHttp, kGrpc };
std::string_view ProtocolName(Protocol protocol);  // "http" | "grpc"

struct Call {
  Protocol protocol = Protocol::kHttp;
  TimePoint received{};  // when the whole request had been read
  // The transport's own deadline (gRPC's); max() = none. Bounds the request's
  // deadline: no answer is computed that the client will no longer read.
  TimePoint deadline = TimePoint::max();
  // True once the client went away; checked before compute. May be empty.
  std::function<bool()> is_cancelled;
};

// A model version as a client writes it: "" = the default version, "2", or
// "2.0" (as TorchServe writes it). kInvalidArgument for anything else.
StatusOr<std::optional<int64_t>> ParseModelVersion(std::string_view text);

}  // namespace inferd::serving
