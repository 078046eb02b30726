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

// A part of the image in stored (pre-EXIF) pixel coordinates.
struct JpegRegion {
  int x = 0, y = 0, width = 0, height = 0;
};

struct DecodedJpeg {
  cv::Mat pixels;      // the decoded rows and columns
  int x0 = 0, y0 = 0;  // where pixels(0, 0) is in the whole image
};

// CV_8UC3 in R,G,B order, or with `rgbx` CV_8UC4 R,G,B,X (X = 255): four
// bytes per pixel let the resampler treat a pixel as one SIMD vector.
// With `region`, only its rows are decoded (the rows above are skipped, those
// below never read) and only its columns widened to whole iMCUs
// (jpeg_crop_scanline): the pixels outside the crop are never made. The pixels
// inside are the same bytes as a whole decode, as long as the region has some
// margin (fancy upsampling reads one neighbour sample).
// kInvalidArgument for corrupt or truncated data, kFailedPrecondition for
// colour spaces libjpeg cannot turn into RGB.
StatusOr<DecodedJpeg> DecodeJpeg(std::string_view bytes, bool rgbx = false,
                                 const JpegRegion* region = nullptr);

// Turns pixels stored with EXIF orientation `orientation` (1..8) upright, as
// PIL's ImageOps.exif_transpose does. 1 returns `image` itself.
cv::Mat ApplyOrientation(const cv::Mat& image, int orientation);

}  // namespace inferd::pipeline
