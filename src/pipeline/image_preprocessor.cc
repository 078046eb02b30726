#include "pipeline/image_preprocessor.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "pipeline/image_decoder.h"
#include "pipeline/pil_resampler.h"

namespace inferd::pipeline {
namespace {

// One axis of torchvision's CenterCrop: which part of the resized image is
// kept (offset, length) and where it lands in the crop (pad before it).
struct CropAxis {
  int offset = 0, length = 0, pad = 0;
};

CropAxis CenterCropAxis(int size, int crop) {
  CropAxis a;
  if (crop > size) {  // torchvision pads with zeros, (crop - size) // 2 before
    a.pad = (crop - size) / 2;
    a.length = size;
  } else {  // int(round((size - crop) / 2.0)): Python rounds halves to even
    a.offset = static_cast<int>(std::nearbyint((size - crop) / 2.0));
    a.length = crop;
  }
  return a;
}

uint16_t ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7FFF + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

std::string Dims(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

StatusOr<std::unique_ptr<ImagePreprocessor>> ImagePreprocessor::Create(
    const config::PreprocessConfig& config, const config::TensorSpec& input) {
  std::unique_ptr<ImagePreprocessor> p(new ImagePreprocessor());
  p->config_ = config;
  p->input_name_ = input.name;
  const std::string where = "preprocess (image) for input '" + input.name + "': ";
  p->channels_ = config.color == config::ColorOrder::kGrayscale ? 1 : 3;
  if (input.dtype != DataType::kFp32 && input.dtype != DataType::kBf16) {
    return InvalidArgument(where + "datatype must be FP32 or BF16, got " +
                           std::string(DataTypeName(input.dtype)));
  }
  p->dtype_ = input.dtype;
  if (input.dims.size() != 3 || (input.dims[0] != -1 && input.dims[0] != p->channels_)) {
    return InvalidArgument(where + "shape must be [" + std::to_string(p->channels_) +
                           ", H, W] for color " + std::string(config::Name(config.color)) + ", got " +
                           ShapeToString(input.dims));
  }
  p->spec_height_ = input.dims[1];
  p->spec_width_ = input.dims[2];
  if (config.resize < 0 || config.center_crop < 0 || config.width < 0 || config.height < 0) {
    return InvalidArgument(where + "resize, center_crop, width and height must be >= 0");
  }
  if ((config.width > 0) != (config.height > 0)) {
    return InvalidArgument(where + "width and height must be set together");
  }
  if (config.max_pixels <= 0) return InvalidArgument(where + "max_pixels must be > 0");
  int out_h = config.center_crop > 0 ? config.center_crop : config.height;
  int out_w = config.center_crop > 0 ? config.center_crop : config.width;
  if (out_h > 0 && ((p->spec_height_ != -1 && p->spec_height_ != out_h) ||
                    (p->spec_width_ != -1 && p->spec_width_ != out_w))) {
    return InvalidArgument(where + "the transform makes " + Dims(out_w, out_h) +
                           " images but the input shape is " + ShapeToString(input.dims));
  }
  auto per_channel = [&](const std::vector<float>& v, float fallback, const char* key,
                         std::vector<float>* out) -> Status {
    if (v.empty())
      out->assign(p->channels_, fallback);
    else if (v.size() == 1)
      out->assign(p->channels_, v[0]);
    else if (static_cast<int>(v.size()) == p->channels_)
      *out = v;
    else {
      return InvalidArgument(where + key + ": expected 1 or " + std::to_string(p->channels_) +
                             " values, got " + std::to_string(v.size()));
    }
    return Status::Ok();
  };
  std::vector<float> mean, std;
  RETURN_IF_ERROR(per_channel(config.mean, 0.0f, "mean", &mean));
  RETURN_IF_ERROR(per_channel(config.std, 1.0f, "std", &std));
  // ToTensor divides by 255; keep that exact arithmetic for the default scale.
  const bool divide = std::fabs(config.scale - 1.0f / 255.0f) < 1e-12f;
  p->lut_.resize(p->channels_);
  p->lut16_.resize(p->channels_);
  for (int c = 0; c < p->channels_; ++c) {
    if (std[c] == 0.0f) return InvalidArgument(where + "std must not be 0");
    for (int v = 0; v < 256; ++v) {
      const int x = config.invert ? 255 - v : v;
      const float scaled =
          divide ? static_cast<float>(x) / 255.0f : static_cast<float>(x) * config.scale;
      p->lut_[c][v] = (scaled - mean[c]) / std[c];
      p->lut16_[c][v] = ToBf16(p->lut_[c][v]);
    }
  }
  return p;
}

Status ImagePreprocessor::Transform(std::string_view bytes, Image8* out) const {
  std::vector<uint8_t> scratch;
  return Transform(bytes, out, &scratch);
}

Status ImagePreprocessor::Transform(std::string_view bytes, Image8* out,
                                    std::vector<uint8_t>* scratch) const {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return PayloadTooLarge("image payload of " + std::to_string(bytes.size()) +
                           " bytes is too large");
  }
  DecodeOptions options;
  options.max_pixels = config_.max_pixels;
  options.grayscale = channels_ == 1;
  // The geometry comes from the header, so that the decoder can skip what the
  // crop throws away.
  ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(bytes));
  RETURN_IF_ERROR(CheckImageInfo(info, options));
  const bool transposed = info.orientation >= 5;  // EXIF 5-8 swap width and height
  const int w = static_cast<int>(transposed ? info.height : info.width);
  const int h = static_cast<int>(transposed ? info.width : info.height);

  int rw = w, rh = h;  // after resize
  if (config_.width > 0) {
    rw = config_.width;
    rh = config_.height;
  } else if (config_.resize > 0) {
    // torchvision: shorter side = resize, longer = int(resize * long / short)
    const int64_t shorter = std::min(w, h), longer = std::max(w, h);
    const int64_t new_long = static_cast<int64_t>(static_cast<double>(config_.resize * longer) /
                                                  static_cast<double>(shorter));
    if (new_long > INT_MAX) return PayloadTooLarge("image aspect ratio too extreme: " + Dims(w, h));
    rw = w <= h ? config_.resize : static_cast<int>(new_long);
    rh = w <= h ? static_cast<int>(new_long) : config_.resize;
  }
  const int cw = config_.center_crop > 0 ? config_.center_crop : rw;
  const int ch = config_.center_crop > 0 ? config_.center_crop : rh;
  if ((spec_height_ != -1 && ch != spec_height_) || (spec_width_ != -1 && cw != spec_width_)) {
    return InvalidArgument("image is " + Dims(cw, ch) + " after preprocessing (decoded " +
                           Dims(w, h) + ") but input '" + input_name_ + "' takes " +
                           Dims(static_cast<int>(spec_width_), static_cast<int>(spec_height_)));
  }
  if (static_cast<int64_t>(cw) * ch > config_.max_pixels) {
    return PayloadTooLarge("image would be " + Dims(cw, ch) + " after resizing, past max_pixels");
  }
  const CropAxis ax = CenterCropAxis(rw, cw), ay = CenterCropAxis(rh, ch);
  ResizeWindowSpec spec;
  spec.in_width = w;
  spec.in_height = h;
  spec.out_width = rw;
  spec.out_height = rh;
  spec.x0 = ax.offset;
  spec.y0 = ay.offset;
  spec.window_width = ax.length;
  spec.window_height = ay.length;
  const SourceRange needed = NeededSource(spec);
  options.region[0] = needed.x_begin;
  options.region[1] = needed.y_begin;
  options.region[2] = needed.x_end - needed.x_begin;
  options.region[3] = needed.y_end - needed.y_begin;

  ASSIGN_OR_RETURN(DecodedImage decoded, DecodeImage(bytes, options));
  const cv::Mat& src = decoded.pixels;
  if (decoded.x0 > needed.x_begin || decoded.y0 > needed.y_begin ||
      decoded.x0 + src.cols < needed.x_end || decoded.y0 + src.rows < needed.y_end) {
    return Internal("image decoder returned less than the needed part of the image");
  }
  const int stored = src.channels();
  spec.in_stride = src.step[0];
  spec.channels = stored;
  spec.src_x0 = decoded.x0;
  spec.src_y0 = decoded.y0;
  out->width = cw;
  out->height = ch;
  out->channels = stored;
  out->bgr = channels_ == 3 && decoded.bgr;

  const bool padded = ax.pad > 0 || ay.pad > 0 || ax.length < cw || ay.length < ch;
  if (!padded) {
    // Reused pixels keep their old bytes: ResizeWindow writes all of them.
    out->pixels.resize(static_cast<size_t>(cw) * ch * stored);
    ResizeWindow(src.ptr<uint8_t>(0), spec, out->pixels.data(), scratch);
    return Status::Ok();
  }
  std::vector<uint8_t> window(static_cast<size_t>(ax.length) * ay.length * stored);
  ResizeWindow(src.ptr<uint8_t>(0), spec, window.data(), scratch);
  out->pixels.assign(static_cast<size_t>(cw) * ch * stored, 0);
  const size_t row = static_cast<size_t>(ax.length) * stored;
  for (int y = 0; y < ay.length; ++y) {
    std::memcpy(&out->pixels[(static_cast<size_t>(y + ay.pad) * cw + ax.pad) * stored],
                &window[y * row], row);
  }
  return Status::Ok();
}

void ImagePreprocessor::Write(const Image8& image, std::byte* dst) const {
  const size_t plane = static_cast<size_t>(image.width) * image.height;
  const int n = image.channels;  // stride between pixels
  const bool swap = channels_ == 3 && image.bgr != (config_.color == config::ColorOrder::kBgr);
  for (int c = 0; c < channels_; ++c) {
    const int src_c = swap ? 2 - c : c;
    const float* lut = lut_[c].data();
    const uint8_t* in = image.pixels.data() + src_c;
    if (dtype_ == DataType::kFp32) {
      float* out = reinterpret_cast<float*>(dst) + c * plane;
      for (size_t i = 0; i < plane; ++i) out[i] = lut[in[i * n]];
    } else {
      const uint16_t* lut16 = lut16_[c].data();
      uint16_t* out = reinterpret_cast<uint16_t*>(dst) + c * plane;
      for (size_t i = 0; i < plane; ++i) out[i] = lut16[in[i * n]];
    }
  }
}

namespace {

// Run's buffers, kept per thread: an executor pre-processes one request at a
// time, so the resized pixels and the resampler's rows of one request serve
// the next instead of being allocated (and zero-filled by resize) per image.
// Buffers past kKeepScratchBytes (an unusually large image) are freed after
// use, so that one such request does not pin its memory on the thread.
struct RunScratch {
  std::vector<Image8> items;
  std::vector<uint8_t> resize;
};
thread_local RunScratch t_run_scratch;
constexpr size_t kKeepScratchBytes = size_t{8} << 20;

// Frees what one call grew past the limit, however it returns.
class TrimScratchOnExit {
 public:
  explicit TrimScratchOnExit(RunScratch* s) : s_(s) {}
  ~TrimScratchOnExit() {
    if (s_->resize.capacity() > kKeepScratchBytes) std::vector<uint8_t>().swap(s_->resize);
    for (Image8& item : s_->items) {
      if (item.pixels.capacity() > kKeepScratchBytes) std::vector<uint8_t>().swap(item.pixels);
    }
    if (s_->items.size() > 64) s_->items = std::vector<Image8>();
  }
  TrimScratchOnExit(const TrimScratchOnExit&) = delete;
  TrimScratchOnExit& operator=(const TrimScratchOnExit&) = delete;

 private:
  RunScratch* s_;
};

}  // namespace

Status ImagePreprocessor::TransformAll(const std::vector<std::string_view>& images,
                                       std::vector<Image8>* items,
                                       std::vector<uint8_t>* scratch) const {
  if (images.empty()) return InvalidArgument("no image in the request");
  items->resize(images.size());
  std::vector<Image8>& out = *items;
  for (size_t i = 0; i < images.size(); ++i) {
    Status st = Transform(images[i], &out[i], scratch);
    if (!st.ok()) return images.size() > 1 ? st.WithContext("item " + std::to_string(i)) : st;
    if (out[i].width != out[0].width || out[i].height != out[0].height) {
      return InvalidArgument(
          "item " + std::to_string(i) + " is " + Dims(out[i].width, out[i].height) +
          " after preprocessing but item 0 is " + Dims(out[0].width, out[0].height) +
          "; set preprocess.center_crop or width/height to batch them");
    }
  }
  return Status::Ok();
}

StatusOr<Tensor> ImagePreprocessor::Run(const std::vector<std::string_view>& images,
                                        TensorPool* pool) const {
  RunScratch& scratch = t_run_scratch;
  TrimScratchOnExit trim(&scratch);
  std::vector<Image8>& items = scratch.items;
  RETURN_IF_ERROR(TransformAll(images, &items, &scratch.resize));
  const Image8& first = items[0];
  // Write fills every byte of every item: no zero fill first.
  const Shape shape = {static_cast<int64_t>(items.size()), channels_, first.height, first.width};
  Tensor tensor = pool ? pool->AllocateUninitialized(dtype_, shape)
                       : Tensor::AllocateUninitialized(dtype_, shape);
  const size_t item_bytes =
      static_cast<size_t>(channels_) * first.height * first.width * DataTypeSize(dtype_);
  for (size_t i = 0; i < items.size(); ++i) Write(items[i], tensor.mutable_data() + i * item_bytes);
  return tensor;
}

size_t ImagePreprocessor::item_bytes() const {
  if (spec_height_ < 0 || spec_width_ < 0) return 0;
  return static_cast<size_t>(channels_) * static_cast<size_t>(spec_height_) *
         static_cast<size_t>(spec_width_) * DataTypeSize(dtype_);
}

Status ImagePreprocessor::RunInto(const std::vector<std::string_view>& images, std::byte* dst,
                                  size_t dst_bytes) const {
  const size_t row = item_bytes();
  if (row == 0) {
    return FailedPrecondition("input '" + input_name_ +
                              "' has a variable height or width: no batch rows to write into");
  }
  if (dst_bytes != images.size() * row) {
    return Internal("preprocess (image): " + std::to_string(images.size()) + " images need " +
                    std::to_string(images.size() * row) + " bytes, the batch gave them " +
                    std::to_string(dst_bytes));
  }
  RunScratch& scratch = t_run_scratch;
  TrimScratchOnExit trim(&scratch);
  std::vector<Image8>& items = scratch.items;
  RETURN_IF_ERROR(TransformAll(images, &items, &scratch.resize));
  // Transform checked the size against the input's height and width.
  for (size_t i = 0; i < items.size(); ++i) Write(items[i], dst + i * row);
  return Status::Ok();
}

}  // namespace inferd::pipeline
