#include "pipeline/image_header.h"

#include <string>

namespace inferd::pipeline {
namespace {

uint32_t Be16(const unsigned char* p) { return (uint32_t{p[0]} << 8) | p[1]; }
uint32_t Be32(const unsigned char* p) { return (Be16(p) << 16) | Be16(p + 2); }
uint32_t Le16(const unsigned char* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
uint32_t Le24(const unsigned char* p) { return Le16(p) | (uint32_t{p[2]} << 16); }
uint32_t Le32(const unsigned char* p) { return Le16(p) | (Le16(p + 2) << 16); }

Status CutShort(ImageFormat format) {
  return InvalidArgument("truncated " + std::string(ImageFormatName(format)) +
                         " image: the data ends inside its header");
}

// EXIF orientation from an APP1 segment body ("Exif\0\0" + TIFF): 1..8,
// 1 when the tag is absent, 0 when the segment is not EXIF (e.g. XMP).
int ExifOrientation(const unsigned char* p, size_t n) {
  if (n < 14 ||
      std::string_view(reinterpret_cast<const char*>(p), 6) != std::string_view("Exif\0\0", 6)) {
    return 0;
  }
  const unsigned char* tiff = p + 6;
  const size_t size = n - 6;
  const bool le = tiff[0] == 'I' && tiff[1] == 'I';
  if (!le && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
  auto u16 = [&](size_t at) { return le ? Le16(tiff + at) : Be16(tiff + at); };
  auto u32 = [&](size_t at) { return le ? Le32(tiff + at) : Be32(tiff + at); };
  const size_t ifd = u32(4);
  if (ifd + 2 > size) return 1;
  const size_t entries = u16(ifd);
  for (size_t i = 0; i < entries; ++i) {
    const size_t e = ifd + 2 + i * 12;
    if (e + 12 > size) return 1;
    if (u16(e) == 0x0112 && u16(e + 2) == 3) {  // Orientation, SHORT
      const uint32_t v = u16(e + 8);
      return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
    }
  }
  return 1;
}

// True for the start-of-frame markers that carry the image size.
bool IsStartOfFrame(unsigned char marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

StatusOr<ImageInfo> ProbeJpeg(const unsigned char* p, size_t n) {
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  bool have_size = false;
  size_t pos = 2;
  while (true) {
    while (pos < n && p[pos] != 0xFF) ++pos;  // tolerate junk between segments
    while (pos < n && p[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= n) return CutShort(info.format);
    unsigned char marker = p[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (marker == 0xD9) return InvalidArgument("JPEG image has no scan data");
    if (pos + 2 > n) return CutShort(info.format);
    size_t length = Be16(p + pos);
    if (length < 2)
      return InvalidArgument("corrupt JPEG image: segment length " + std::to_string(length));
    if (marker == 0xE1 && pos + length <= n) {
      if (int o = ExifOrientation(p + pos + 2, length - 2)) info.orientation = o;
    }
    if (IsStartOfFrame(marker)) {
      if (length < 7 || pos + 7 > n) return CutShort(info.format);
      info.height = Be16(p + pos + 3);
      info.width = Be16(p + pos + 5);
      have_size = true;
    }
    if (marker == 0xDA) {  // start of scan: entropy-coded data follows
      if (!have_size) return InvalidArgument("corrupt JPEG image: scan before frame header");
      size_t scan = pos + length;
      // Entropy-coded data never holds FF D9 (FF is stuffed as FF 00), so an
      // EOI after the first scan means the file was not cut short.
      info.complete = false;
      for (size_t i = n; i >= scan + 2; --i) {
        if (p[i - 2] == 0xFF && p[i - 1] == 0xD9) {
          info.complete = true;
          break;
        }
      }
      return info;
    }
    pos += length;
  }
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
      return ProbeJpeg(p, bytes.size());
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
