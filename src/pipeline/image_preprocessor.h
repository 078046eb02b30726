// ImagePreprocessor: encoded image bytes -> one item of a model's input tensor,
// the way torchvision's Resize(resize) + CenterCrop(center_crop) + ToTensor()
// + Normalize(mean, std) would make it from a PIL image.
//
// Per image: probe the header (pixel limit), decode, resize only the pixels the
// crop keeps (PIL's antialiased bilinear, bit-exact), then one pass that maps
// each uint8 through a per-channel table ((v*scale - mean) / std, optionally
// inverted) straight into the NCHW output, FP32 or BF16.
// Configuration is checked once in Create; Transform/Write/Run are const and
// thread-safe (each call uses its own buffers; Run keeps its per-image
// buffers per thread, for the thread's next call).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_pool.h"
#include "config/model_config.h"

namespace inferd::pipeline {

// An image after resize and crop, before normalisation: height x width x
// channels uint8 (channels: 1, or 4 for colour with the 4th byte unused).
struct Image8 {
  int width = 0, height = 0, channels = 0;
  bool bgr = false;  // colour data in B,G,R,X order (as decoded)
  std::vector<uint8_t> pixels;
};

class ImagePreprocessor {
 public:
  // `input` is the model input the image becomes: [C, H, W] (C = 3, or 1 for
  // color: grayscale), FP32 or BF16. H and W must match the crop or exact size.
  static StatusOr<std::unique_ptr<ImagePreprocessor>> Create(const config::PreprocessConfig& config,
                                                             const config::TensorSpec& input);

  // Decode, resize and crop. Errors: kInvalidArgument, kPayloadTooLarge.
  Status Transform(std::string_view bytes, Image8* out) const;
  // Normalises `image` into `dst`: channels*height*width elements of dtype().
  void Write(const Image8& image, std::byte* dst) const;
  // Both steps for a batch: one [N, C, H, W] tensor, its bytes from `pool`
  // when given (Write fills every byte: no zero fill). Item i's error is
  // returned with "item i: " in front when there is more than one item.
  StatusOr<Tensor> Run(const std::vector<std::string_view>& images,
                       TensorPool* pool = nullptr) const;
  // Both steps for a batch, into `dst`: exactly images.size() rows of
  // item_bytes() each (a slice of a batch tensor that the caller owns). Only for an input
  // with fixed height and width (item_bytes() > 0). Errors as Run's; on an
  // error, the rows written so far are indeterminate.
  Status RunInto(const std::vector<std::string_view>& images, std::byte* dst,
                 size_t dst_bytes) const;
  // Bytes of one item of the input (channels x height x width x dtype); 0
  // when the input's height or width is variable.
  size_t item_bytes() const;

  DataType dtype() const { return dtype_; }
  int channels() const { return channels_; }

 private:
  ImagePreprocessor() = default;
  // Transform with the resampler's scratch rows supplied (reused by Run).
  Status Transform(std::string_view bytes, Image8* out, std::vector<uint8_t>* scratch) const;
  // Transform of every image into `items`, which must all have one size.
  Status TransformAll(const std::vector<std::string_view>& images, std::vector<Image8>* items,
                      std::vector<uint8_t>* scratch) const;

  config::PreprocessConfig config_;
  std::string input_name_;
  DataType dtype_ = DataType::kFp32;
  int channels_ = 3;
  int64_t spec_height_ = -1, spec_width_ = -1;    // -1 = any
  std::vector<std::array<float, 256>> lut_;       // per output channel: uint8 -> value
  std::vector<std::array<uint16_t, 256>> lut16_;  // the same as bf16 bits
};

}  // namespace inferd::pipeline
