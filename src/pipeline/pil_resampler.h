// ResizeWindow: PIL's bilinear resize (Image.resize(..., BILINEAR), the one
// torchvision's transforms.Resize uses on PIL images), computed only for a
// window of the output, e.g. the center crop.
//
// PIL resamples with a triangle filter whose support grows with the downscale
// factor (an antialiased bilinear), in two separable 8-bit passes (horizontal
// first, then vertical, each rounded to uint8) with 22-bit fixed-point weights.
// This is a replica of Pillow's Resample.c arithmetic, so the result is the
// same bytes as PIL's resize followed by a crop, without computing the pixels
// that the crop throws away.
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferd::pipeline {

struct ResizeWindowSpec {
  int in_width = 0, in_height = 0;          // source image
  size_t in_stride = 0;                     // bytes per source row
  int channels = 3;                         // interleaved uint8 channels, 1..4
  int out_width = 0, out_height = 0;        // size of the (virtual) resized image
  int x0 = 0, y0 = 0;                       // window origin in the resized image
  int window_width = 0, window_height = 0;  // inside [0,out_width) x [0,out_height)
  int src_x0 = 0, src_y0 = 0;  // where `src` starts in the source image (a decoded part of it)
};

// The source pixels [x_begin, x_end) x [y_begin, y_end) that ResizeWindow reads.
struct SourceRange {
  int x_begin = 0, x_end = 0, y_begin = 0, y_end = 0;
};
SourceRange NeededSource(const ResizeWindowSpec& spec);

// Writes window_height x window_width x channels packed uint8 to `dst`. `src`
// holds at least NeededSource(spec), its pixel (0, 0) being (src_x0, src_y0).
// `scratch` is reused between calls to avoid allocations.
void ResizeWindow(const uint8_t* src, const ResizeWindowSpec& spec, uint8_t* dst,
                  std::vector<uint8_t>* scratch);

}  // namespace inferd::pipeline
