#include "pipeline/image_header.h"

#include <string>

#include "pipeline/byte_order.h"
#include "pipeline/jpeg_decoder.h"

namespace inferd::pipeline {
namespace {

Status CutShort(ImageFormat format) {
  return InvalidArgument("truncated " + std::string(ImageFormatName(format)) +
                         " image: the data ends inside its header");
}

// JPEG: libjpeg reads the header, so that the size checked against the pixel
// limit is the size the decoder makes (see jpeg_decoder.h).
StatusOr<ImageInfo> ProbeJpeg(std::string_view bytes) {
  ASSIGN_OR_RETURN(JpegHeader header, ReadJpegHeader(bytes));
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.width = header.width;
  info.height = header.height;
  info.complete = header.complete;
  info.orientation = header.orientation;
  return info;
}

StatusOr<ImageInfo> ProbePng(const unsigned char* p, size_t n) {
  ImageInfo info;
  info.format = ImageFormat::kPng;
  if (n < 24) return CutShort(info.format);
  if (std::string_view(reinterpret_cast<const char*>(p + 12), 4) != "IHDR") {
    return InvalidArgument("corrupt PNG image: first chunk is not IHDR");
  }
  info.width = Be32(p + 16);
  info.height = Be32(p + 20);
  return info;
}

StatusOr<ImageInfo> ProbeBmp(const unsigned char* p, size_t n) {
  ImageInfo info;
  info.format = ImageFormat::kBmp;
  if (n < 26) return CutShort(info.format);
  uint32_t header_size = Le32(p + 14);
  if (header_size == 12) {  // BITMAPCOREHEADER: 16-bit dims
    info.width = Le16(p + 18);
    info.height = Le16(p + 20);
  } else {
    info.width = static_cast<int32_t>(Le32(p + 18));
    info.height = static_cast<int32_t>(Le32(p + 22));
    if (info.height < 0) info.height = -info.height;  // top-down rows
    if (info.width < 0) return InvalidArgument("corrupt BMP image: negative width");
  }
  return info;
}

StatusOr<ImageInfo> ProbeWebp(const unsigned char* p, size_t n) {
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  if (n < 30) return CutShort(info.format);
  std::string_view chunk(reinterpret_cast<const char*>(p + 12), 4);
  const unsigned char* d = p + 20;
  if (chunk == "VP8 ") {
    if (d[3] != 0x9D || d[4] != 0x01 || d[5] != 0x2A) {
      return InvalidArgument("corrupt WebP image: bad VP8 start code");
    }
    info.width = Le16(d + 6) & 0x3FFF;
    info.height = Le16(d + 8) & 0x3FFF;
  } else if (chunk == "VP8L") {
    if (d[0] != 0x2F) return InvalidArgument("corrupt WebP image: bad VP8L signature");
    uint32_t bits = Le32(d + 1);
    info.width = (bits & 0x3FFF) + 1;
    info.height = ((bits >> 14) & 0x3FFF) + 1;
  } else if (chunk == "VP8X") {
    info.width = int64_t{Le24(d + 4)} + 1;
    info.height = int64_t{Le24(d + 7)} + 1;
  } else {
    return InvalidArgument("unsupported WebP chunk '" + std::string(chunk) + "'");
  }
  return info;
}

}  // namespace

std::string_view ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kWebp:
      return "WebP";
  }
  return "?";
}

bool SniffImageFormat(std::string_view bytes, ImageFormat* format) {
  auto starts = [&](std::string_view magic, size_t at = 0) {
    return bytes.size() >= at + magic.size() && bytes.substr(at, magic.size()) == magic;
  };
  if (starts("\xFF\xD8\xFF"))
    *format = ImageFormat::kJpeg;
  else if (starts("\x89PNG\r\n\x1A\n"))
    *format = ImageFormat::kPng;
  else if (starts("BM") && bytes.size() >= 14)
    *format = ImageFormat::kBmp;
  else if (starts("RIFF") && starts("WEBP", 8))
    *format = ImageFormat::kWebp;
  else
    return false;
  return true;
}

StatusOr<ImageInfo> ProbeImage(std::string_view bytes) {
  ImageFormat format;
  if (!SniffImageFormat(bytes, &format)) {
    if (bytes.empty()) return InvalidArgument("empty image payload");
    return InvalidArgument("not a JPEG, PNG, BMP or WebP image (unrecognised leading bytes)");
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  switch (format) {
    case ImageFormat::kJpeg:
      return ProbeJpeg(bytes);
    case ImageFormat::kPng:
      return ProbePng(p, bytes.size());
    case ImageFormat::kBmp:
      return ProbeBmp(p, bytes.size());
    case ImageFormat::kWebp:
      return ProbeWebp(p, bytes.size());
  }
  return InvalidArgument("unsupported image format");
}

}  // namespace inferd::pipeline
