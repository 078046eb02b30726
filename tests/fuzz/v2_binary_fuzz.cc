// KServe v2 infer request with the binary tensor extension. Input layout: the
// Inference-Header-Content-Length value as text, a newline, then the body (JSON
// header followed by the raw tensor bytes).
#include <memory>
#include <optional>

#include "v2_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos || nl > 32) return 0;
  std::optional<std::string> header(std::string(in.substr(0, nl)));
  auto body = std::make_shared<std::string>(in.substr(nl + 1));
  inferd::fuzz::CheckV2Request(inferd::http::ParseV2InferRequest(body, header));
  return 0;
}
