// The image header probe alone (pipeline/image_header.h) and the checks made
// on what it reports.
#include "fuzz_util.h"
#include "pipeline/image_decoder.h"
#include "pipeline/image_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto info = inferd::pipeline::ProbeImage(bytes);
  if (!info.ok()) {
    inferd::fuzz::CheckClientError(info.status());
    return 0;
  }
  FUZZ_CHECK(info->orientation >= 1 && info->orientation <= 8, "orientation");
  inferd::pipeline::DecodeOptions options;
  inferd::Status st = inferd::pipeline::CheckImageInfo(*info, options);
  if (!st.ok()) inferd::fuzz::CheckClientError(st);
  return 0;
}
