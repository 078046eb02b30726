// One image decoder, chosen at build time (INFERD_FUZZ_FORMAT: jpeg, png, bmp,
// webp). Inputs that do not start with the format's magic bytes get them put in
// front, so that the fuzzer stays inside that decoder. A decoded image must
// have exactly the size its header announced (rotated by EXIF orientation):
// the pixel limit is checked on the header, so header and decoder must agree.
#include <string>

#include "fuzz_util.h"
#include "pipeline/image_decoder.h"

namespace {

std::string_view Magic() {
  const std::string_view format = INFERD_FUZZ_FORMAT;
  if (format == "jpeg") return std::string_view("\xFF\xD8\xFF", 3);
  if (format == "png") return std::string_view("\x89PNG\r\n\x1A\n", 8);
  if (format == "bmp") return "BM";
  return "RIFF";  // webp: RIFF....WEBP
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string_view magic = Magic();
  if (bytes.compare(0, magic.size(), magic) != 0) bytes.insert(0, magic);
  if (magic == "RIFF" && (bytes.size() < 12 || bytes.compare(8, 4, "WEBP") != 0)) {
    bytes.insert(std::min<size_t>(bytes.size(), 4), "\0\0\0\0WEBP", 8);
  }
  inferd::pipeline::DecodeOptions options;
  options.max_pixels = 4 << 20;  // keeps each run fast; the limit logic is the same
  options.grayscale = size > 0 && (data[size - 1] & 1);
  auto image = inferd::pipeline::DecodeImage(bytes, options);
  if (!image.ok()) {
    inferd::fuzz::CheckClientError(image.status());
    return 0;
  }
  const auto& info = image->info;
  const bool transposed = info.orientation >= 5;
  const int64_t w = transposed ? info.height : info.width;
  const int64_t h = transposed ? info.width : info.height;
  FUZZ_CHECK(image->pixels.cols == w && image->pixels.rows == h,
             "header says " + std::to_string(w) + "x" + std::to_string(h) + ", decoded " +
                 std::to_string(image->pixels.cols) + "x" + std::to_string(image->pixels.rows));
  FUZZ_CHECK(image->pixels.channels() == (options.grayscale ? 1 : 4), "channels");
  return 0;
}
