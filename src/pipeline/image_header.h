// ProbeImage: reads an encoded image's format and dimensions from its header
// without decoding it, so that an image past the pixel limit is refused before
// any pixel memory is allocated (cv::imdecode has no header-only API).
//
// Understands JPEG, PNG (IHDR), BMP (DIB header) and WebP (VP8, VP8L, VP8X).
// JPEG headers are read by libjpeg itself (jpeg_decoder.h), so that the probe
// and the decoder agree on the size by construction; for JPEG it also reports
// whether an end-of-image marker follows the first scan, and its EXIF
// orientation: libjpeg decodes a truncated file into a half-grey picture with a
// warning, so truncation has to be caught here. The other formats are checked
// after decoding (DecodeImage refuses a decoder output of another size).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace inferd::pipeline {

enum class ImageFormat { kJpeg, kPng, kBmp, kWebp };

std::string_view ImageFormatName(ImageFormat format);  // "JPEG", "PNG", ...

struct ImageInfo {
  ImageFormat format = ImageFormat::kJpeg;
  int64_t width = 0;
  int64_t height = 0;
  bool complete = true;  // false: the data visibly ends early (JPEG without EOI after the scan)
  int orientation = 1;   // EXIF orientation 1..8 (JPEG APP1 only); 1 = as stored
};

// kInvalidArgument when the bytes are not a supported image or the header is cut short.
StatusOr<ImageInfo> ProbeImage(std::string_view bytes);

// Guesses the format from the magic bytes only; false when unknown.
bool SniffImageFormat(std::string_view bytes, ImageFormat* format);

}  // namespace inferd::pipeline
