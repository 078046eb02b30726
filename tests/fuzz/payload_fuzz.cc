// Raw payload unwrapping (pipeline/payload.h): multipart/form-data, base64
// or text in a JSON object, or the bytes as they are. Input layout: the
// Content-Type header value, a newline, then the body. The payload found must
// lie inside the body or inside the decoded storage.
#include <string>

#include "fuzz_util.h"
#include "pipeline/payload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return 0;
  inferd::scheduler::RawInput raw{std::string(in.substr(0, nl)), std::string(in.substr(nl + 1))};
  std::string storage;
  auto payload = inferd::pipeline::UnwrapPayload(raw, &storage);
  if (!payload.ok()) {
    inferd::fuzz::CheckClientError(payload.status());
    return 0;
  }
  const char* p = payload->bytes.data();
  const size_t n = payload->bytes.size();
  auto inside = [&](const std::string& s) {
    return n == 0 || (p >= s.data() && p + n <= s.data() + s.size());
  };
  FUZZ_CHECK(inside(raw.bytes) || inside(storage), "payload outside the body and the storage");
  // Base64 on its own, over the whole input.
  auto decoded = inferd::pipeline::DecodeBase64(in);
  if (decoded.ok()) {
    FUZZ_CHECK(decoded->size() <= in.size() / 4 * 3 + 3, "base64 grew");
  } else {
    inferd::fuzz::CheckClientError(decoded.status());
  }
  return 0;
}
