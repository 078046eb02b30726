#include "pipeline/image_decoder.h"

#include <algorithm>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>

#include "pipeline/jpeg_decoder.h"

namespace inferd::pipeline {
namespace {

// Pillow's L24: L = (R*19595 + G*38470 + B*7471 + 0x8000) >> 16.
cv::Mat ToLuma(const cv::Mat& color, bool bgr) {
  cv::Mat gray(color.rows, color.cols, CV_8UC1);
  const int r = bgr ? 2 : 0, b = bgr ? 0 : 2, step = color.channels();
  for (int y = 0; y < color.rows; ++y) {
    const uint8_t* in = color.ptr<uint8_t>(y);
    uint8_t* out = gray.ptr<uint8_t>(y);
    for (int x = 0; x < color.cols; ++x, in += step) {
      out[x] =
          static_cast<uint8_t>((in[r] * 19595u + in[1] * 38470u + in[b] * 7471u + 0x8000u) >> 16);
    }
  }
  return gray;
}

// cv::imdecode picks the first of its decoders whose signature check accepts
// the bytes, whatever ProbeImage said. Every codec but one keys on leading
// bytes, which ProbeImage has already matched to PNG, BMP or WebP (no other
// codec's leading signature can match those); the exception is DICOM (GDCM), which
// keys on "DICM" at offset 128 and so takes any buffer that OpenCV's own
// decoder for the format refused (a WebP whose VP8 header libwebp rejects).
// Debian's GDCM then fails an assert on malformed data: abort(), the whole
// server. Found by the decode_webp fuzz target. A real PNG, BMP or WebP has
// those four bytes by chance once in 2^32 images; it is refused with 400.
bool OpenCvWouldTryDicom(std::string_view bytes) {
  return bytes.size() >= 132 && bytes.substr(128, 4) == "DICM";
}

StatusOr<cv::Mat> DecodeWithOpenCv(std::string_view bytes, const std::string& format) {
  if (OpenCvWouldTryDicom(bytes)) {
    return InvalidArgument("cannot decode " + format +
                           " image: bytes 128-131 read \"DICM\", which would hand it to the "
                           "DICOM decoder");
  }
  cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8UC1,
                  const_cast<char*>(bytes.data()));  // imdecode only reads it
  cv::Mat decoded;
  try {
    decoded = cv::imdecode(encoded, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return InvalidArgument("cannot decode " + format + " image: " + e.what());
  }
  if (decoded.empty()) {
    return InvalidArgument("cannot decode " + format + " image (corrupt or truncated data)");
  }
  if (decoded.type() != CV_8UC3) {
    return InvalidArgument("cannot decode " + format + " image: unexpected pixel type");
  }
  return decoded;
}

}  // namespace

StatusOr<DecodedImage> DecodeImage(std::string_view bytes, const DecodeOptions& options) {
  // OpenCV would run cvtColor/flip on its own TBB pool: threads outside the
  // core plan, next to pinned executors. Pre-processing runs on the executor
  // that asked for it, so OpenCV runs sequentially (process-wide setting;
  // pipeline/ is OpenCV's only user).
  static const bool sequential = [] {
    cv::setNumThreads(0);
    return true;
  }();
  (void)sequential;
  DecodedImage image;
  ASSIGN_OR_RETURN(image.info, ProbeImage(bytes));
  RETURN_IF_ERROR(CheckImageInfo(image.info, options));
  const ImageInfo& info = image.info;
  const std::string format(ImageFormatName(info.format));
  cv::Mat decoded;
  image.bgr = true;
  if (info.format == ImageFormat::kJpeg) {
    JpegRegion region;
    const bool partial = info.orientation == 1 && options.region[2] > 0 && options.region[3] > 0;
    if (partial) {  // a margin of one iMCU keeps upsampling at the edges out of the region
      constexpr int kMargin = 16;
      const int x0 = std::max(0, options.region[0] - kMargin);
      const int y0 = std::max(0, options.region[1] - kMargin);
      region.x = x0;
      region.y = y0;
      region.width = static_cast<int>(
          std::min<int64_t>(info.width, options.region[0] + options.region[2] + kMargin) - x0);
      region.height = static_cast<int>(
          std::min<int64_t>(info.height, options.region[1] + options.region[3] + kMargin) - y0);
    }
    ASSIGN_OR_RETURN(DecodedJpeg jpeg,
                     DecodeJpeg(bytes, /*rgbx=*/!options.grayscale, partial ? &region : nullptr));
    decoded = ApplyOrientation(jpeg.pixels, info.orientation);
    image.x0 = jpeg.x0;
    image.y0 = jpeg.y0;
    image.bgr = false;
  } else {
    ASSIGN_OR_RETURN(decoded, DecodeWithOpenCv(bytes, format));
    // OpenCV reads the header again itself: refuse an image whose decoded
    // size is not the one the pixel limit was checked on.
    const bool transposed = info.orientation >= 5;
    const int64_t w = transposed ? info.height : info.width;
    const int64_t h = transposed ? info.width : info.height;
    if (decoded.cols != w || decoded.rows != h) {
      return InvalidArgument("corrupt " + format + " image: its header says " +
                             std::to_string(w) + "x" + std::to_string(h) + " but it decodes to " +
                             std::to_string(decoded.cols) + "x" + std::to_string(decoded.rows));
    }
    if (!options.grayscale) {
      cv::Mat bgrx;
      cv::cvtColor(decoded, bgrx, cv::COLOR_BGR2BGRA);
      decoded = std::move(bgrx);
    }
  }
  if (options.grayscale) {
    image.pixels = ToLuma(decoded, image.bgr);
    image.bgr = false;
  } else {
    image.pixels = std::move(decoded);
  }
  return image;
}

Status CheckImageInfo(const ImageInfo& info, const DecodeOptions& options) {
  const std::string format(ImageFormatName(info.format));
  if (info.width <= 0 || info.height <= 0) {
    return InvalidArgument(format + " image has zero size (" + std::to_string(info.width) + "x" +
                           std::to_string(info.height) + ")");
  }
  if (info.width > options.max_pixels / info.height) {  // w * h > max, without overflow
    return PayloadTooLarge(format + " image of " + std::to_string(info.width) + "x" +
                           std::to_string(info.height) + " pixels is past the limit of " +
                           std::to_string(options.max_pixels) + " pixels (preprocess.max_pixels)");
  }
  if (!info.complete) {
    return InvalidArgument("truncated " + format + " image: no end-of-image marker after the scan");
  }
  return Status::Ok();
}

}  // namespace inferd::pipeline
