// KeySet: the API keys of one version of the --auth-keys file, and the pure
// decision whether a request's Authorization header may call a route.
//
//   # --auth-keys FILE (YAML)
//   inference:  [KEY, ...]   # TorchServe /predictions, KServe v2 /v2/..., gRPC inference
//   management: [KEY, ...]   # the management port and gRPC's repository calls; also inference
//   metrics:    [KEY, ...]   # optional: /metrics needs one of these (or a management key);
//                            # without this list /metrics stays open
//
// A key is 16 to 4096 characters of RFC 6750's token68 alphabet (A-Z a-z 0-9
// - . _ ~ + / with trailing =), sent as `Authorization: Bearer KEY`. Keys are
// kept only as SHA-256 digests and compared with CRYPTO_memcmp against every
// key of the set (no early exit), so neither the comparison nor the search
// tells an attacker how much of a guess was right. No message here ever holds
// a key: parse errors name the list and the position only.
// Immutable after Parse; any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::auth {

// What a route needs. Health routes need nothing and never ask.
enum class Kind { kInference, kManagement, kMetrics };
std::string_view KindName(Kind kind);  // inference | management | metrics

enum class Decision {
  kAllow,
  kUnauthenticated,  // no Authorization, not Bearer, or an unknown key: 401 / UNAUTHENTICATED
  kForbidden,        // a known key of another kind: 403 / PERMISSION_DENIED
};

// The token of `Bearer TOKEN` (scheme case-insensitive, spaces around
// trimmed), or empty when the header is absent, another scheme, or malformed.
std::string_view BearerToken(std::string_view authorization);

class KeySet {
 public:
  // Parses the file's text; `origin` (the file name) prefixes the errors.
  static StatusOr<KeySet> Parse(std::string_view yaml, std::string_view origin);

  // May a request with this Authorization header call a route that needs `kind`?
  Decision Authorize(Kind kind, std::string_view authorization) const;

  // False when no metrics keys are listed: /metrics is then open.
  bool metrics_protected() const { return count(Kind::kMetrics) > 0; }
  size_t count(Kind kind) const;  // keys listed under `kind`

 private:
  using Digest = std::array<uint8_t, 32>;
  struct Entry {
    Digest digest;
    unsigned kinds;  // bit (1 << Kind) for each list the key is in
  };
  std::vector<Entry> entries_;
  size_t counts_[3] = {0, 0, 0};
};

}  // namespace inferd::auth
