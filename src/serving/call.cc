#include "serving/call.h"

#include <charconv>
#include <string>

namespace inferd::serving {

std::string_view ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kHttp:
      return "http";
    case Protocol::kGrpc:
      return "grpc";
  }
  return "unknown";
}

StatusOr<std::optional<int64_t>> ParseModelVersion(std::string_view text) {
  if (text.empty()) return std::optional<int64_t>();
  std::string_view digits = text;
  if (digits.size() > 2 && digits.substr(digits.size() - 2) == ".0") digits.remove_suffix(2);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || v <= 0) {
    return InvalidArgument("model version must be a positive integer, got '" + std::string(text) +
                           "'");
  }
  return std::optional<int64_t>(v);
}

}  // namespace inferd::serving
