// MirrorConfig: a model's `mirror:` key (traffic mirroring, src/mirror/):
//
//   mirror: {to: CANDIDATE, fraction: 0.1, max_in_flight: 8, timeout_ms: 5000}
//
// CANDIDATE is a model of the store ("name" or "name:version") or a KServe v2
// endpoint on another server ("http://host:port/v2/models/NAME"). The same
// fields come as JSON through the management API (PUT /models/{m}/mirror),
// checked by the same ValidateMirrorConfig. Plain data; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace YAML {
class Node;
}

namespace inferd::config {

struct MirrorConfig {
  std::string to;             // the candidate (see above); required
  double fraction = 0.1;      // share of the primary's requests mirrored, 0..1
  int max_in_flight = 8;      // mirrored requests at once; past it they are dropped (counted)
  int64_t timeout_ms = 5000;  // a candidate answer later than this counts as a timeout
};

// Whether `to` names a remote endpoint (starts with http://) rather than a model of the store.
bool IsRemoteCandidate(const std::string& to);

// kInvalidArgument naming the field ("mirror.fraction: expected a number from 0 to 1, got 2").
Status ValidateMirrorConfig(const MirrorConfig& config);

// Parses the `mirror:` mapping of a config.yaml (`file` for messages) and validates it.
StatusOr<MirrorConfig> ParseMirrorConfig(const YAML::Node& node, const std::string& file);

}  // namespace inferd::config
