#include "pipeline/jpeg_decoder.h"

#include <csetjmp>
#include <cstdio>
#include <string>

// libjpeg's headers need <cstdio> (FILE, size_t) before them.
#include <jerror.h>
#include <jpeglib.h>

namespace inferd::pipeline {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool premature_end;
};

[[noreturn]] void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void EmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  // The data ended (EOF), or a marker came where the scan still needed bits
  // (a cut file with an EOI glued on). Other warnings are tolerated, as PIL does.
  if (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER) {
    err->premature_end = true;
  }
  cinfo->err->num_warnings++;
}

enum class Outcome { kOk, kError, kTruncated, kUnsupportedColor };

// Only trivially destructible locals live in this frame: longjmp skips destructors.
Outcome Decode(const unsigned char* data, size_t size, bool rgbx, const JpegRegion* region,
               DecodedJpeg* out, ErrorManager* err) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = ErrorExit;
  err->pub.emit_message = EmitMessage;
  err->premature_end = false;
  err->message[0] = '\0';
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kError;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kUnsupportedColor;
  }
  cinfo.out_color_space = rgbx ? JCS_EXT_RGBX : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  JDIMENSION first_row = 0, end_row = cinfo.output_height;
  out->x0 = 0;
  out->y0 = 0;
  if (region) {
    // Columns: libjpeg widens the range to whole iMCUs; rows: skip, then stop early.
    JDIMENSION x = static_cast<JDIMENSION>(region->x),
               width = static_cast<JDIMENSION>(region->width);
    jpeg_crop_scanline(&cinfo, &x, &width);
    out->x0 = static_cast<int>(x);
    first_row = static_cast<JDIMENSION>(region->y);
    end_row = static_cast<JDIMENSION>(region->y + region->height);
    if (first_row > 0) jpeg_skip_scanlines(&cinfo, first_row);
    out->y0 = static_cast<int>(first_row);
  }
  out->pixels.create(static_cast<int>(end_row - first_row), static_cast<int>(cinfo.output_width),
                     rgbx ? CV_8UC4 : CV_8UC3);
  JSAMPROW rows[16];
  while (cinfo.output_scanline < end_row) {
    const unsigned left = end_row - cinfo.output_scanline;
    const unsigned n = left < 16 ? left : 16;
    for (unsigned i = 0; i < n; ++i) {
      rows[i] =
          out->pixels.ptr<unsigned char>(static_cast<int>(cinfo.output_scanline - first_row + i));
    }
    jpeg_read_scanlines(&cinfo, rows, n);
  }
  if (cinfo.output_scanline < cinfo.output_height) {
    jpeg_abort_decompress(&cinfo);  // the rows below the region are not needed
  } else {
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  return err->premature_end ? Outcome::kTruncated : Outcome::kOk;
}

}  // namespace

StatusOr<DecodedJpeg> DecodeJpeg(std::string_view bytes, bool rgbx, const JpegRegion* region) {
  DecodedJpeg out;
  ErrorManager err;
  switch (Decode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), rgbx, region,
                 &out, &err)) {
    case Outcome::kOk:
      return out;
    case Outcome::kTruncated:
      return InvalidArgument("truncated JPEG image: the data ends before the last scan");
    case Outcome::kUnsupportedColor:
      return FailedPrecondition("CMYK JPEG");
    case Outcome::kError:
      break;
  }
  return InvalidArgument(std::string("cannot decode JPEG image: ") + err.message);
}

cv::Mat ApplyOrientation(const cv::Mat& image, int orientation) {
  cv::Mat out;
  switch (orientation) {
    case 2:
      cv::flip(image, out, 1);
      return out;
    case 3:
      cv::flip(image, out, -1);
      return out;
    case 4:
      cv::flip(image, out, 0);
      return out;
    case 5:
      cv::transpose(image, out);
      return out;
    case 6:
      cv::transpose(image, out);
      cv::flip(out, out, 1);
      return out;  // 90 degrees clockwise
    case 7:
      cv::transpose(image, out);
      cv::flip(out, out, -1);
      return out;
    case 8:
      cv::transpose(image, out);
      cv::flip(out, out, 0);
      return out;  // 90 degrees counter-clockwise
    default:
      return image;
  }
}

}  // namespace inferd::pipeline
