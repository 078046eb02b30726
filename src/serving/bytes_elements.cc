#include "serving/bytes_elements.h"

#include <cstring>
#include <string>

namespace inferd::serving {

void AppendBytesElement(std::vector<std::byte>& out, std::string_view element) {
  uint32_t len = static_cast<uint32_t>(element.size());
  size_t at = out.size();
  out.resize(at + 4 + element.size());
  std::memcpy(out.data() + at, &len, 4);  // little-endian host (x86-64, aarch64)
  if (!element.empty()) std::memcpy(out.data() + at + 4, element.data(), element.size());
}

namespace {

// Walks the BYTES elements, calling `visit(element)` for each; checks that
// they fill `size` exactly and number `count` (-1: any).
template <typename Visit>
Status WalkBytesElements(const std::byte* data, size_t size, int64_t count, std::string_view what,
                         Visit visit) {
  size_t at = 0;
  int64_t n = 0;
  while (at < size) {
    if (size - at < 4) {
      return InvalidArgument(std::string(what) + ": BYTES element " + std::to_string(n) +
                             ": truncated 4-byte length prefix at byte " + std::to_string(at));
    }
    uint32_t len;
    std::memcpy(&len, data + at, 4);
    at += 4;
    if (len > size - at) {
      return InvalidArgument(std::string(what) + ": BYTES element " + std::to_string(n) +
                             " declares " + std::to_string(len) + " bytes but only " +
                             std::to_string(size - at) + " remain");
    }
    visit(std::string_view(reinterpret_cast<const char*>(data + at), len));
    at += len;
    ++n;
  }
  if (count >= 0 && n != count) {
    return InvalidArgument(std::string(what) + ": expected " + std::to_string(count) +
                           " BYTES elements, got " + std::to_string(n));
  }
  return Status::Ok();
}

}  // namespace

Status CheckBytesElements(const std::byte* data, size_t size, int64_t count,
                          std::string_view what) {
  return WalkBytesElements(data, size, count, what, [](std::string_view) {});
}

StatusOr<std::vector<std::string_view>> SplitBytesElements(const std::byte* data, size_t size,
                                                           int64_t count, std::string_view what) {
  // Counted first, without keeping anything (see CheckBytesElements).
  RETURN_IF_ERROR(CheckBytesElements(data, size, count, what));
  std::vector<std::string_view> out;
  out.reserve(count >= 0 ? static_cast<size_t>(count) : 0);
  RETURN_IF_ERROR(WalkBytesElements(data, size, count, what,
                                    [&](std::string_view e) { out.push_back(e); }));
  return out;
}

}  // namespace inferd::serving
