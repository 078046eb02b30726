#include "pipeline/jpeg_decoder.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// libjpeg's headers need <cstdio> (FILE, size_t) before them.
#include <jerror.h>
#include <jpeglib.h>

#include "pipeline/byte_order.h"

namespace inferd::pipeline {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool premature_end;
  bool over_limit;  // stopped by a limit of ours (scans), not by libjpeg
};

// Scan counting (kMaxJpegScans): libjpeg calls the monitor between passes
// and while absorbing input, so a file of many tiny scans is stopped early.
struct ProgressLimit {
  jpeg_progress_mgr pub;  // first: libjpeg sees a jpeg_progress_mgr*
  ErrorManager* err;
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

void CheckScans(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* err = reinterpret_cast<ProgressLimit*>(cinfo->progress)->err;
    std::snprintf(err->message, sizeof err->message, "more than %d scans", kMaxJpegScans);
    err->over_limit = true;
    std::longjmp(err->jump, 1);
  }
}

// EXIF orientation from an APP1 segment body ("Exif\0\0" + TIFF): 1..8,
// 1 when the tag is absent, 0 when the segment is not EXIF (e.g. XMP).

int ExifOrientation(const unsigned char* p, size_t n) {
  static const unsigned char kExif[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (n < 14 || std::memcmp(p, kExif, 6) != 0) return 0;
  const unsigned char* tiff = p + 6;
  const size_t size = n - 6;
  const bool le = tiff[0] == 'I' && tiff[1] == 'I';
  if (!le && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
  auto u16 = [&](size_t at) { return le ? Le16(tiff + at) : Be16(tiff + at); };
  auto u32 = [&](size_t at) {
    return le ? (Le16(tiff + at) | (Le16(tiff + at + 2) << 16))
              : ((Be16(tiff + at) << 16) | Be16(tiff + at + 2));
  };
  const size_t ifd = u32(4);
  if (ifd > size || size - ifd < 2) return 1;
  const size_t entries = u16(ifd);
  for (size_t i = 0; i < entries; ++i) {
    const size_t e = ifd + 2 + i * 12;
    if (e > size || size - e < 12) return 1;
    if (u16(e) == 0x0112 && u16(e + 2) == 3) {  // Orientation, SHORT
      const uint32_t v = u16(e + 8);
      return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
    }
  }
  return 1;
}

void Setup(jpeg_decompress_struct* cinfo, ErrorManager* err, ProgressLimit* progress) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = ErrorExit;
  err->pub.emit_message = EmitMessage;
  err->premature_end = false;
  err->over_limit = false;
  err->message[0] = '\0';
  progress->pub.progress_monitor = CheckScans;
  progress->err = err;
}

enum class Outcome { kOk, kError, kTruncated };

// What a longjmp from ErrorExit means: input cut short (unless the scan limit
// stopped it), or a bad file.
Outcome FailedOutcome(const ErrorManager& err) {
  return err.premature_end && !err.over_limit ? Outcome::kTruncated : Outcome::kError;
}

// The start shared by ReadHeader and Decode, called after their setjmp: an
// error here longjmps to it, so this frame holds nothing that needs destroying.
void Open(jpeg_decompress_struct* cinfo, ProgressLimit* progress, const unsigned char* data,
          size_t size) {
  jpeg_create_decompress(cinfo);
  cinfo->progress = &progress->pub;
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
}

bool IsCmyk(const jpeg_decompress_struct& cinfo) {
  return cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
}

// Only trivially destructible locals live in the frames that call setjmp:
// longjmp skips destructors.
Outcome ReadHeader(const unsigned char* data, size_t size, JpegHeader* out, ErrorManager* err) {
  jpeg_decompress_struct cinfo;
  ProgressLimit progress;
  Setup(&cinfo, err, &progress);
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return FailedOutcome(*err);
  }
  Open(&cinfo, &progress, data, size);
  jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
  const int header = jpeg_read_header(&cinfo, TRUE);
  if (header != JPEG_HEADER_OK || err->premature_end) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kTruncated;
  }
  out->width = cinfo.image_width;
  out->height = cinfo.image_height;
  out->cmyk = IsCmyk(cinfo);
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m; m = m->next) {
    if (int o = ExifOrientation(m->data, m->data_length)) {
      out->orientation = o;
      break;
    }
  }
  // Entropy-coded data never holds FF D9 (FF is stuffed as FF 00), so an EOI
  // behind the first scan's header means the file was not cut short.
  const unsigned char* scan = cinfo.src->next_input_byte;
  out->complete = false;
  for (const unsigned char* p = data + size; p >= scan + 2; --p) {
    if (p[-2] == 0xFF && p[-1] == 0xD9) {
      out->complete = true;
      break;
    }
  }
  jpeg_destroy_decompress(&cinfo);
  return Outcome::kOk;
}

// Pillow's cmyk2rgb on Adobe-inverted CMYK (what PIL assumes for every 4
// component JPEG), for one row, in place when dst == src and rgbx.
void CmykRowToRgb(const unsigned char* src, unsigned char* dst, JDIMENSION width, bool rgbx) {
  auto muldiv255 = [](unsigned a, unsigned b) {
    const unsigned t = a * b + 128;
    return ((t >> 8) + t) >> 8;
  };
  for (JDIMENSION x = 0; x < width; ++x, src += 4, dst += rgbx ? 4 : 3) {
    const unsigned nk = src[3];  // stored inverted: 255 - K
    const unsigned c = 255u - src[0], m = 255u - src[1], y = 255u - src[2];
    dst[0] = static_cast<unsigned char>(nk - muldiv255(c, nk));
    dst[1] = static_cast<unsigned char>(nk - muldiv255(m, nk));
    dst[2] = static_cast<unsigned char>(nk - muldiv255(y, nk));
    if (rgbx) dst[3] = 255;
  }
}

Outcome Decode(const unsigned char* data, size_t size, bool rgbx, const JpegRegion* region,
               DecodedJpeg* out, unsigned char* cmyk_row, size_t cmyk_row_size,
               ErrorManager* err) {
  jpeg_decompress_struct cinfo;
  ProgressLimit progress;
  Setup(&cinfo, err, &progress);
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return FailedOutcome(*err);
  }
  Open(&cinfo, &progress, data, size);
  jpeg_read_header(&cinfo, TRUE);
  const bool cmyk = IsCmyk(cinfo);
  cinfo.out_color_space = cmyk ? JCS_CMYK : rgbx ? JCS_EXT_RGBX : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  if (cmyk && cmyk_row_size < static_cast<size_t>(cinfo.output_width) * 4) {
    std::snprintf(err->message, sizeof err->message, "CMYK row buffer too small");
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kError;
  }
  JDIMENSION first_row = 0, end_row = cinfo.output_height;
  out->x0 = 0;
  out->y0 = 0;
  if (region) {
    if (region->x < 0 || region->y < 0 || region->width <= 0 || region->height <= 0 ||
        static_cast<JDIMENSION>(region->x) + static_cast<JDIMENSION>(region->width) >
            cinfo.output_width ||
        static_cast<JDIMENSION>(region->y) + static_cast<JDIMENSION>(region->height) >
            cinfo.output_height) {
      std::snprintf(err->message, sizeof err->message, "region outside the %ux%u image",
                    cinfo.output_width, cinfo.output_height);
      jpeg_destroy_decompress(&cinfo);
      return Outcome::kError;
    }
    // Columns: libjpeg widens the range to whole iMCUs; rows: skip, then stop early.
    JDIMENSION x = static_cast<JDIMENSION>(region->x),
               width = static_cast<JDIMENSION>(region->width);
    jpeg_crop_scanline(&cinfo, &x, &width);
    out->x0 = static_cast<int>(x);
    first_row = static_cast<JDIMENSION>(region->y);
    end_row = static_cast<JDIMENSION>(region->y + region->height);
    if (first_row > 0 && jpeg_skip_scanlines(&cinfo, first_row) != first_row) {
      std::snprintf(err->message, sizeof err->message, "cannot skip to row %u", first_row);
      jpeg_destroy_decompress(&cinfo);
      return Outcome::kError;
    }
    out->y0 = static_cast<int>(first_row);
  }
  out->pixels.create(static_cast<int>(end_row - first_row), static_cast<int>(cinfo.output_width),
                     rgbx ? CV_8UC4 : CV_8UC3);
  JSAMPROW rows[16];
  while (cinfo.output_scanline < end_row) {
    const unsigned row = cinfo.output_scanline - first_row;
    JDIMENSION got;
    if (cmyk) {
      rows[0] = cmyk_row;
      got = jpeg_read_scanlines(&cinfo, rows, 1);
      if (got == 1) {
        CmykRowToRgb(cmyk_row, out->pixels.ptr<unsigned char>(static_cast<int>(row)),
                     cinfo.output_width, rgbx);
      }
    } else {
      const unsigned left = end_row - cinfo.output_scanline;
      const unsigned n = left < 16 ? left : 16;
      for (unsigned i = 0; i < n; ++i) {
        rows[i] = out->pixels.ptr<unsigned char>(static_cast<int>(row + i));
      }
      got = jpeg_read_scanlines(&cinfo, rows, n);
    }
    if (got == 0) {  // no progress (suspension cannot happen with a memory source)
      std::snprintf(err->message, sizeof err->message, "decoding stopped at row %u",
                    cinfo.output_scanline);
      jpeg_destroy_decompress(&cinfo);
      return Outcome::kError;
    }
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

StatusOr<JpegHeader> ReadJpegHeader(std::string_view bytes) {
  JpegHeader header;
  ErrorManager err;
  switch (ReadHeader(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &header,
                     &err)) {
    case Outcome::kOk:
      return header;
    case Outcome::kTruncated:
      return InvalidArgument("truncated JPEG image: the data ends inside its header");
    case Outcome::kError:
      break;
  }
  return InvalidArgument(std::string("corrupt JPEG image: ") + err.message);
}

StatusOr<DecodedJpeg> DecodeJpeg(std::string_view bytes, bool rgbx, const JpegRegion* region) {
  DecodedJpeg out;
  ErrorManager err;
  // Room for one CMYK row, made before the decoder's frame (see Decode).
  ASSIGN_OR_RETURN(JpegHeader header, ReadJpegHeader(bytes));
  std::vector<unsigned char> cmyk_row(header.cmyk ? static_cast<size_t>(header.width) * 4 : 0);
  switch (Decode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), rgbx, region,
                 &out, cmyk_row.data(), cmyk_row.size(), &err)) {
    case Outcome::kOk:
      return out;
    case Outcome::kTruncated:
      return InvalidArgument("truncated JPEG image: the data ends before the last scan");
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
