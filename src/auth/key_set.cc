#include "auth/key_set.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <optional>

namespace inferd::auth {
namespace {

constexpr size_t kMinKeyLength = 16;
constexpr size_t kMaxKeyLength = 4096;
constexpr Kind kKinds[] = {Kind::kInference, Kind::kManagement, Kind::kMetrics};

unsigned Bit(Kind kind) { return 1u << static_cast<unsigned>(kind); }

// The lists whose keys may call a route of `kind`.
unsigned Grants(Kind kind) {
  switch (kind) {
    case Kind::kInference:
      return Bit(Kind::kInference) | Bit(Kind::kManagement);
    case Kind::kManagement:
      return Bit(Kind::kManagement);
    case Kind::kMetrics:
      return Bit(Kind::kMetrics) | Bit(Kind::kManagement);
  }
  return 0;
}

bool IsToken68(std::string_view s) {
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
    if (!ok) break;
  }
  if (i == 0) return false;
  for (; i < s.size(); ++i) {
    if (s[i] != '=') return false;
  }
  return true;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// OpenSSL 3's one-shot SHA256() looks the algorithm up in its provider on
// every call (3.4 us per check here); fetched once, with a context per
// thread, a whole check takes about 1 us.
const EVP_MD* Sha256Md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

// A digest context per thread, reused (no allocation per check).
struct DigestContext {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~DigestContext() { EVP_MD_CTX_free(ctx); }
};

// nullopt when OpenSSL fails: the callers then refuse (fail closed).
std::optional<std::array<uint8_t, 32>> Sha256(std::string_view text) {
  thread_local DigestContext context;
  std::array<uint8_t, 32> digest{};
  unsigned int size = 0;
  const EVP_MD* md = Sha256Md();
  if (md == nullptr || context.ctx == nullptr ||
      EVP_DigestInit_ex2(context.ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(context.ctx, text.data(), text.size()) != 1 ||
      EVP_DigestFinal_ex(context.ctx, digest.data(), &size) != 1 || size != digest.size()) {
    return std::nullopt;
  }
  return digest;
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kInference:
      return "inference";
    case Kind::kManagement:
      return "management";
    case Kind::kMetrics:
      return "metrics";
  }
  return "unknown";
}

std::string_view BearerToken(std::string_view h) {
  while (!h.empty() && IsSpace(h.front())) h.remove_prefix(1);
  while (!h.empty() && IsSpace(h.back())) h.remove_suffix(1);
  constexpr std::string_view kScheme = "bearer";
  if (h.size() <= kScheme.size() || !IsSpace(h[kScheme.size()])) return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    const char c = h[i] >= 'A' && h[i] <= 'Z' ? static_cast<char>(h[i] - 'A' + 'a') : h[i];
    if (c != kScheme[i]) return {};
  }
  h.remove_prefix(kScheme.size());
  while (!h.empty() && IsSpace(h.front())) h.remove_prefix(1);
  if (!IsToken68(h)) return {};
  return h;
}

StatusOr<KeySet> KeySet::Parse(std::string_view yaml, std::string_view origin) {
  const std::string where = std::string(origin);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // The reason and where; yaml-cpp's parser messages do not quote the text.
    return InvalidArgument(where + ": not valid YAML: " + e.msg + " (line " +
                           std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1) + ")");
  }
  if (!root.IsMap()) {
    return InvalidArgument(where + ": expected a map with inference:, management: and metrics: lists");
  }
  for (const auto& item : root) {
    const std::string name = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (name != "inference" && name != "management" && name != "metrics") {
      return InvalidArgument(where + ": unknown field '" + name +
                             "' (expected inference, management, metrics)");
    }
  }
  KeySet set;
  for (Kind kind : kKinds) {
    const std::string list(KindName(kind));
    const YAML::Node node = root[list];
    if (!node || node.IsNull()) continue;
    if (!node.IsSequence()) return InvalidArgument(where + ": " + list + " must be a list of keys");
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string at = where + ": " + list + "[" + std::to_string(i) + "]";
      if (!node[i].IsScalar()) return InvalidArgument(at + " is not a string");
      const std::string& key = node[i].Scalar();
      if (key.size() < kMinKeyLength || key.size() > kMaxKeyLength || !IsToken68(key)) {
        return InvalidArgument(at + ": a key must be " + std::to_string(kMinKeyLength) + " to " +
                               std::to_string(kMaxKeyLength) +
                               " characters of A-Z a-z 0-9 - . _ ~ + / (then optional =)");
      }
      const std::optional<Digest> hashed = Sha256(key);
      if (!hashed) return Internal(where + ": OpenSSL cannot compute SHA-256");
      const Digest& digest = *hashed;
      bool merged = false;
      for (auto& e : set.entries_) {
        if (e.digest == digest) {
          e.kinds |= Bit(kind);
          merged = true;
        }
      }
      if (!merged) set.entries_.push_back({digest, Bit(kind)});
      ++set.counts_[static_cast<int>(kind)];
    }
  }
  if (set.count(Kind::kInference) + set.count(Kind::kManagement) == 0) {
    return InvalidArgument(where + ": no inference or management keys (every call would be refused)");
  }
  return set;
}

Decision KeySet::Authorize(Kind kind, std::string_view authorization) const {
  const std::string_view token = BearerToken(authorization);
  if (token.empty() || token.size() > kMaxKeyLength) return Decision::kUnauthenticated;
  const std::optional<Digest> hashed = Sha256(token);
  if (!hashed) return Decision::kUnauthenticated;
  const Digest& digest = *hashed;
  unsigned kinds = 0;
  for (const Entry& e : entries_) {
    // Every entry is compared, in constant time; the match only selects bits.
    const unsigned match = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
    kinds |= e.kinds & (0u - match);
  }
  if (kinds == 0) return Decision::kUnauthenticated;
  return (kinds & Grants(kind)) ? Decision::kAllow : Decision::kForbidden;
}

size_t KeySet::count(Kind kind) const { return counts_[static_cast<int>(kind)]; }

}  // namespace inferd::auth
