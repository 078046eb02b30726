// The Authorization header as a client sends it: the Bearer parser, the key
// check against a fixed key file (SHA-256 + CRYPTO_memcmp), and the HTTP
// guard's answer. Input: the request path, a newline, the header's value.
// Invariants: a parsed token is a piece of the header; only the exact key
// is allowed, with the kinds its lists give; refusals are 401/403 JSON that
// never quote what the client sent.
#include <string>
#include <string_view>

#include "auth/key_set.h"
#include "fuzz_util.h"
#include "http/access_guard.h"

namespace {

using inferd::auth::Decision;
using inferd::auth::Kind;

constexpr std::string_view kInfer = "infer-key-0123456789";
constexpr std::string_view kAdmin = "admin-key-0123456789==";

const inferd::auth::KeySet& Keys() {
  static const inferd::auth::KeySet keys = [] {
    auto set = inferd::auth::KeySet::Parse(
        "inference: [" + std::string(kInfer) + "]\nmanagement: [\"" + std::string(kAdmin) + "\"]\n",
        "fuzz.yaml");
    FUZZ_CHECK(set.ok(), set.status().ToString());
    return *set;
  }();
  return keys;
}

class FixedStore : public inferd::auth::Authorizer {
 public:
  Decision Authorize(Kind kind, std::string_view h) const override {
    return Keys().Authorize(kind, h);
  }
  bool metrics_protected() const override { return true; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view path = newline == std::string_view::npos ? "/" : input.substr(0, newline);
  const std::string_view header =
      newline == std::string_view::npos ? input : input.substr(newline + 1);

  const std::string_view token = inferd::auth::BearerToken(header);
  if (!token.empty()) {
    FUZZ_CHECK(token.data() >= header.data() &&
                   token.data() + token.size() <= header.data() + header.size(),
               "the token is not a piece of the header");
  }
  for (Kind kind : {Kind::kInference, Kind::kManagement, Kind::kMetrics}) {
    const Decision d = Keys().Authorize(kind, header);
    if (token != kInfer && token != kAdmin) {
      FUZZ_CHECK(d == Decision::kUnauthenticated, "an unknown key was let through");
    } else if (token == kAdmin) {
      FUZZ_CHECK(d == Decision::kAllow, "the management key was refused");
    } else {
      FUZZ_CHECK(d == (kind == Kind::kInference ? Decision::kAllow : Decision::kForbidden),
                 "the inference key got the wrong answer");
    }
  }

  static const FixedStore store;
  for (Kind kind : {Kind::kInference, Kind::kManagement, Kind::kMetrics}) {
    const inferd::http::AccessGuard guard(&store, kind);
    const auto refusal = guard.Check("GET", path, header);
    if (!refusal) continue;
    FUZZ_CHECK(refusal->status == 401 || refusal->status == 403, std::to_string(refusal->status));
    inferd::fuzz::CheckJson(refusal->body);
    if (token.size() >= 16) {  // the fixed messages hold no run of 16 token characters
      FUZZ_CHECK(refusal->body.find(token) == std::string::npos, "the answer quotes the key");
    }
  }
  return 0;
}
