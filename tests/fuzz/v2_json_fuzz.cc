// KServe v2 infer request as JSON (no binary extension): the bytes are the body.
#include <memory>
#include <optional>

#include "v2_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto body = std::make_shared<std::string>(reinterpret_cast<const char*>(data), size);
  inferd::fuzz::CheckV2Request(inferd::http::ParseV2InferRequest(body, std::nullopt));
  return 0;
}
