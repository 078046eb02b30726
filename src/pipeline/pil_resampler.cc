#include "pipeline/pil_resampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define INFERD_X86 1
#endif

namespace inferd::pipeline {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS

// Per output index of one axis: the first source index, how many source
// indices contribute, and their fixed-point weights (ksize per index).
struct AxisCoefficients {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;
};

double Triangle(double x) {
  if (x < 0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for outputs [begin, begin+n).
AxisCoefficients ComputeCoefficients(int in_size, int out_size, int begin, int n) {
  AxisCoefficients c;
  double scale = static_cast<double>(in_size) / out_size;
  double filterscale = scale < 1.0 ? 1.0 : scale;
  double support = 1.0 * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(n);
  c.count.resize(n);
  c.weights.assign(static_cast<size_t>(n) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int i = 0; i < n; ++i) {
    int xx = begin + i;
    double center = (xx + 0.5) * scale;
    double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = Triangle((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    int32_t* w = &c.weights[static_cast<size_t>(i) * c.ksize];
    for (int x = 0; x < xmax; ++x) {
      double v = ww != 0.0 ? k[x] / ww : k[x];
      w[x] = v < 0 ? static_cast<int32_t>(-0.5 + v * (1 << kPrecisionBits))
                   : static_cast<int32_t>(0.5 + v * (1 << kPrecisionBits));
    }
    c.first[i] = xmin;
    c.count[i] = xmax;
  }
  return c;
}

inline uint8_t Clip8(int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

// One row: out[i*ch + c] = sum_k row[(first+k)*ch + c] * w[k].
template <int kChannels>
void HorizontalRow(const uint8_t* row, const AxisCoefficients& c, int channels, uint8_t* out) {
  const int ch = kChannels > 0 ? kChannels : channels;
  const int n = static_cast<int>(c.first.size());
  for (int i = 0; i < n; ++i) {
    const int32_t* w = &c.weights[static_cast<size_t>(i) * c.ksize];
    const uint8_t* p = row + static_cast<size_t>(c.first[i]) * ch;
    int32_t acc[4] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1),
                      1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
    for (int k = 0; k < c.count[i]; ++k) {
      for (int j = 0; j < ch; ++j) acc[j] += p[k * ch + j] * w[k];
    }
    for (int j = 0; j < ch; ++j) out[i * ch + j] = Clip8(acc[j]);
  }
}

#if INFERD_X86
// 4 interleaved channels (RGBX): one pixel is one vector of 4 int32 lanes, so
// each tap is one widen + multiply + add for all channels. Same integers as
// the scalar code, so the same bytes.
__attribute__((target("sse4.1"))) void HorizontalRow4Sse41(const uint8_t* row,
                                                           const AxisCoefficients& c,
                                                           uint8_t* out) {
  const int n = static_cast<int>(c.first.size());
  const __m128i half = _mm_set1_epi32(1 << (kPrecisionBits - 1));
  for (int i = 0; i < n; ++i) {
    const int32_t* w = &c.weights[static_cast<size_t>(i) * c.ksize];
    const uint8_t* p = row + static_cast<size_t>(c.first[i]) * 4;
    __m128i acc = half;
    for (int k = 0; k < c.count[i]; ++k) {
      int32_t px;
      std::memcpy(&px, p + 4 * k, 4);
      const __m128i v = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(px));
      acc = _mm_add_epi32(acc, _mm_mullo_epi32(v, _mm_set1_epi32(w[k])));
    }
    // Clip8 == clamp(acc >> 22, 0, 255): the packs saturate exactly so.
    const __m128i shifted = _mm_srai_epi32(acc, kPrecisionBits);
    const __m128i packed = _mm_packus_epi16(_mm_packs_epi32(shifted, shifted), _mm_setzero_si128());
    const int32_t result = _mm_cvtsi128_si32(packed);
    std::memcpy(out + static_cast<size_t>(i) * 4, &result, 4);
  }
}

bool HaveSse41() {
  static const bool have = __builtin_cpu_supports("sse4.1");
  return have;
}
#endif

// acc[x] += row[x] * w over one row; the vertical pass's inner loop.
__attribute__((target_clones("default", "sse4.1", "avx2"))) void AccumulateRow(int32_t* acc,
                                                                               const uint8_t* row,
                                                                               int32_t w,
                                                                               size_t n) {
  for (size_t x = 0; x < n; ++x) acc[x] += row[x] * w;
}

__attribute__((target_clones("default", "sse4.1", "avx2"))) void StoreRow(uint8_t* out,
                                                                          const int32_t* acc,
                                                                          size_t n) {
  for (size_t x = 0; x < n; ++x) {
    const int32_t v = acc[x] >> kPrecisionBits;
    out[x] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}

void Horizontal(const uint8_t* row, const AxisCoefficients& c, int channels, uint8_t* out) {
#if INFERD_X86
  if (channels == 4 && HaveSse41()) return HorizontalRow4Sse41(row, c, out);
#endif
  switch (channels) {
    case 1:
      HorizontalRow<1>(row, c, channels, out);
      break;
    case 3:
      HorizontalRow<3>(row, c, channels, out);
      break;
    case 4:
      HorizontalRow<4>(row, c, channels, out);
      break;
    default:
      HorizontalRow<0>(row, c, channels, out);
      break;
  }
}

}  // namespace

// [begin, end) of the source indices one axis of the window reads.
void AxisRange(int in_size, int out_size, int begin, int n, int* lo, int* hi) {
  if (in_size == out_size) {
    *lo = begin;
    *hi = begin + n;
    return;
  }
  AxisCoefficients c = ComputeCoefficients(in_size, out_size, begin, n);
  *lo = c.first.front();
  *hi = c.first.front() + c.count.front();
  for (int i = 0; i < n; ++i) {
    *lo = std::min(*lo, c.first[i]);
    *hi = std::max(*hi, c.first[i] + c.count[i]);
  }
}

SourceRange NeededSource(const ResizeWindowSpec& s) {
  SourceRange r;
  AxisRange(s.in_width, s.out_width, s.x0, s.window_width, &r.x_begin, &r.x_end);
  AxisRange(s.in_height, s.out_height, s.y0, s.window_height, &r.y_begin, &r.y_end);
  return r;
}

void ResizeWindow(const uint8_t* src, const ResizeWindowSpec& s, uint8_t* dst,
                  std::vector<uint8_t>* scratch) {
  const int ch = s.channels;
  const size_t row_bytes = static_cast<size_t>(s.window_width) * ch;
  const bool horizontal = s.out_width != s.in_width;
  const bool vertical = s.out_height != s.in_height;

  AxisCoefficients vc;
  int row_begin = s.y0, row_end = s.y0 + s.window_height;  // source rows needed
  if (vertical) {
    vc = ComputeCoefficients(s.in_height, s.out_height, s.y0, s.window_height);
    row_begin = vc.first.front();
    row_end = vc.first.back() + vc.count.back();
    for (int i = 0; i < s.window_height; ++i) {
      row_begin = std::min(row_begin, vc.first[i]);
      row_end = std::max(row_end, vc.first[i] + vc.count[i]);
    }
  }

  // Pass 1: the source rows the window needs, at the output width.
  const uint8_t* rows;  // row r of the needed range at rows + (r - row_begin) * rows_stride
  size_t rows_stride;
  if (horizontal) {
    AxisCoefficients hc = ComputeCoefficients(s.in_width, s.out_width, s.x0, s.window_width);
    for (int& f : hc.first) f -= s.src_x0;  // into the decoded part
    uint8_t* tmp = dst;
    if (vertical) {
      scratch->resize(static_cast<size_t>(row_end - row_begin) * row_bytes);
      tmp = scratch->data();
    }
    for (int r = row_begin; r < row_end; ++r) {
      Horizontal(src + static_cast<size_t>(r - s.src_y0) * s.in_stride, hc, ch,
                 tmp + static_cast<size_t>(r - row_begin) * row_bytes);
    }
    if (!vertical) return;
    rows = tmp;
    rows_stride = row_bytes;
  } else {
    rows = src + static_cast<size_t>(row_begin - s.src_y0) * s.in_stride +
           static_cast<size_t>(s.x0 - s.src_x0) * ch;
    rows_stride = s.in_stride;
    if (!vertical) {
      for (int r = 0; r < s.window_height; ++r) {
        std::memcpy(dst + r * row_bytes, rows + r * rows_stride, row_bytes);
      }
      return;
    }
  }

  // Pass 2: vertical, accumulating whole rows so the inner loop is contiguous.
  std::vector<int32_t> acc(row_bytes);
  for (int i = 0; i < s.window_height; ++i) {
    std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
    const int32_t* w = &vc.weights[static_cast<size_t>(i) * vc.ksize];
    for (int k = 0; k < vc.count[i]; ++k) {
      const uint8_t* row = rows + static_cast<size_t>(vc.first[i] + k - row_begin) * rows_stride;
      AccumulateRow(acc.data(), row, w[k], row_bytes);
    }
    StoreRow(dst + static_cast<size_t>(i) * row_bytes, acc.data(), row_bytes);
  }
}

}  // namespace inferd::pipeline
