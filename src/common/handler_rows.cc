#include "common/handler_rows.h"

#include <cstring>

namespace inferd {

size_t HandlerRowSize(std::string_view content_type, size_t body_size) {
  return kHandlerRowHeader + content_type.size() + body_size;
}

void WriteHandlerRow(std::string_view content_type, std::string_view body, std::byte* dst) {
  const uint32_t ct_len = static_cast<uint32_t>(content_type.size());
  const uint64_t body_len = body.size();
  std::memcpy(dst, &ct_len, sizeof ct_len);
  std::memcpy(dst + sizeof ct_len, &body_len, sizeof body_len);
  std::byte* at = dst + kHandlerRowHeader;
  if (!content_type.empty()) std::memcpy(at, content_type.data(), content_type.size());
  if (!body.empty()) std::memcpy(at + content_type.size(), body.data(), body.size());
}

StatusOr<HandlerRow> ReadHandlerRow(const std::byte* data, size_t size) {
  if (size < kHandlerRowHeader) return InvalidArgument("handler row shorter than its header");
  uint32_t ct_len = 0;
  uint64_t body_len = 0;
  std::memcpy(&ct_len, data, sizeof ct_len);
  std::memcpy(&body_len, data + sizeof ct_len, sizeof body_len);
  const size_t room = size - kHandlerRowHeader;
  if (ct_len > room || body_len > room - ct_len) {
    return InvalidArgument("handler row's lengths run past its " + std::to_string(size) + " bytes");
  }
  const char* at = reinterpret_cast<const char*>(data + kHandlerRowHeader);
  return HandlerRow{std::string_view(at, ct_len), std::string_view(at + ct_len, body_len)};
}

}  // namespace inferd
