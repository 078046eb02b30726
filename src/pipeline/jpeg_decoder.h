// DecodeJpeg: JPEG bytes -> RGB pixels with libjpeg-turbo directly.
//
// Why not cv::imdecode: OpenCV 4.6 decodes to RGB and then swaps every pixel
// to BGR in a scalar loop, which costs about as much as the decoding itself
// (measured with perf on a 451x300 JPEG). Asking libjpeg for RGB skips that,
// and the decoder's own "premature end of data" warning reports truncation.
// The output is bit-identical to OpenCV's and PIL's (same libjpeg-turbo,
// default islow IDCT and fancy upsampling). EXIF orientation is NOT applied
// here (see ApplyOrientation). CMYK/YCCK JPEGs answer kUnimplemented-like
// kFailedPrecondition so that the caller can fall back to OpenCV.
// Pure functions; thread-safe.
#pragma once

#include <opencv2/core.hpp>
#include <string_view>

#include "common/status.h"

namespace inferd::pipeline {

// CV_8UC3 in R,G,B order, or with `rgbx` CV_8UC4 R,G,B,X (X = 255): four
// bytes per pixel let the resampler treat a pixel as one SIMD vector.
// kInvalidArgument for corrupt or truncated data, kFailedPrecondition for
// colour spaces libjpeg cannot turn into RGB.
StatusOr<cv::Mat> DecodeJpeg(std::string_view bytes, bool rgbx = false);

// Turns pixels stored with EXIF orientation `orientation` (1..8) upright, as
// PIL's ImageOps.exif_transpose does. 1 returns `image` itself.
cv::Mat ApplyOrientation(const cv::Mat& image, int orientation);

}  // namespace inferd::pipeline
