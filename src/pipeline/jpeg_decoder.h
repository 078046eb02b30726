// DecodeJpeg: JPEG bytes -> RGB pixels with libjpeg-turbo directly, and
// ReadJpegHeader: the size, colour space and EXIF orientation, read by the same
// libjpeg: the pixel limit is checked on exactly the size the decoder will
// make (a hand-written marker scanner can disagree with libjpeg on odd bytes,
// and then the limit is checked on one size and another is decoded).
//
// Why not cv::imdecode: OpenCV 4.6 decodes to RGB and then swaps every pixel
// to BGR in a scalar loop, which costs about as much as the decoding itself
// (measured with perf on a 451x300 JPEG). Asking libjpeg for RGB skips that,
// and the decoder's own "premature end of data" warning reports truncation.
// The output is bit-identical to OpenCV's and PIL's (same libjpeg-turbo,
// default islow IDCT and fancy upsampling). CMYK and YCCK JPEGs are turned
// into RGB as PIL does (Adobe's inverted CMYK, then Pillow's cmyk2rgb).
// EXIF orientation is NOT applied here (see ApplyOrientation).
// Limits (a small file must not cost unbounded time): at most kMaxJpegScans
// scans, and the decode loop stops when libjpeg makes no progress.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
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

// More scans than any encoder writes (libjpeg's progressive script has 10,
// mozjpeg's optimised ones about 20); each scan costs a pass over the image.
inline constexpr int kMaxJpegScans = 100;

struct JpegHeader {
  int64_t width = 0, height = 0;  // as libjpeg will decode them
  int orientation = 1;            // EXIF orientation 1..8 (APP1); 1 = as stored
  bool cmyk = false;              // CMYK or YCCK: decoded to RGB as PIL does
  // An end-of-image marker follows the first scan's header: libjpeg decodes a
  // truncated file into a half-grey picture with only a warning.
  bool complete = true;
};

// kInvalidArgument for data libjpeg refuses or that ends inside the header.
StatusOr<JpegHeader> ReadJpegHeader(std::string_view bytes);

// CV_8UC3 in R,G,B order, or with `rgbx` CV_8UC4 R,G,B,X (X = 255): four
// bytes per pixel let the resampler treat a pixel as one SIMD vector.
// With `region`, only its rows are decoded (the rows above are skipped, those
// below never read) and only its columns widened to whole iMCUs
// (jpeg_crop_scanline): the pixels outside the crop are never made. The pixels
// inside are the same bytes as a whole decode, as long as the region has some
// margin (fancy upsampling reads one neighbour sample).
// kInvalidArgument for corrupt or truncated data, too many scans, or a region
// outside the image.
StatusOr<DecodedJpeg> DecodeJpeg(std::string_view bytes, bool rgbx = false,
                                 const JpegRegion* region = nullptr);

// Turns pixels stored with EXIF orientation `orientation` (1..8) upright, as
// PIL's ImageOps.exif_transpose does. 1 returns `image` itself.
cv::Mat ApplyOrientation(const cv::Mat& image, int orientation);

}  // namespace inferd::pipeline
