// DecodeImage: encoded JPEG/PNG/BMP/WebP bytes -> 8-bit pixels, refusing
// oversized, truncated and undecodable images with a Status instead of an
// exception or a half-grey picture.
//
// The pixel limit is checked on the header dimensions (ProbeImage) BEFORE any
// pixel memory is allocated; the decoder runs only for images within it.
// JPEG (CMYK included) goes to libjpeg-turbo directly (jpeg_decoder.h: RGB,
// no BGR swap pass; its header is probed by libjpeg too) and its EXIF
// orientation is applied here; PNG, BMP and WebP go through cv::imdecode, which
// gives BGR, and must decode to the size their header announced (else 400).
// `bgr` says which order came out; callers that want the other order swap
// channels when they write the tensor, not with a copy.
// Colour comes out with 4 bytes per pixel (the 4th unused) so that the
// resampler handles a pixel as one SIMD vector.
// Grayscale output is PIL's convert("L") of the RGB pixels (ITU-R 601-2 luma
// in Pillow's fixed point), so it matches torchvision pipelines bit for bit.
// Thread-safe. The first call sets OpenCV to run sequentially (cv::setNumThreads(0)):
// decoding runs on the calling executor, never on an OpenCV thread pool.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <string_view>

#include "common/status.h"
#include "pipeline/image_header.h"

namespace inferd::pipeline {

struct DecodeOptions {
  int64_t max_pixels = 64LL * 1000 * 1000;  // width * height; larger answers kPayloadTooLarge
  bool grayscale = false;                   // 1 channel (PIL "L") instead of 3
  // The part of the image the caller will read {x, y, width, height}; JPEGs
  // without EXIF rotation then decode only about that part. Empty = all.
  int region[4] = {0, 0, 0, 0};
};

struct DecodedImage {
  ImageInfo info;      // as the header says (before EXIF rotation)
  int x0 = 0, y0 = 0;  // where pixels(0, 0) lies in the whole (upright) image
  cv::Mat pixels;      // CV_8UC4 (RGBX or BGRX) or CV_8UC1, after EXIF rotation
  bool bgr = false;    // colour pixels are in B,G,R,X order
};

// kInvalidArgument: not an image, corrupt, truncated, zero-sized.
// kPayloadTooLarge: more than max_pixels.
StatusOr<DecodedImage> DecodeImage(std::string_view bytes, const DecodeOptions& options);

// The header checks DecodeImage starts with (zero size, pixel limit, truncation).
Status CheckImageInfo(const ImageInfo& info, const DecodeOptions& options);

}  // namespace inferd::pipeline
