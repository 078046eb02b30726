// The whole image pre-processing of a request (pipeline/image_preprocessor.h):
// probe, decode only the part the crop keeps (JPEG), resize, crop, normalise.
// The first byte picks the transform (resize + center crop, exact size,
// grayscale); the rest is the image.
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "pipeline/image_preprocessor.h"

namespace {

using inferd::pipeline::ImagePreprocessor;

std::vector<std::unique_ptr<ImagePreprocessor>> Make() {
  std::vector<std::unique_ptr<ImagePreprocessor>> out;
  inferd::config::PreprocessConfig crop;
  crop.kind = inferd::config::PreprocessKind::kImage;
  crop.resize = 40;
  crop.center_crop = 32;
  crop.max_pixels = 4 << 20;
  inferd::config::TensorSpec rgb{"image", inferd::DataType::kFp32, {3, 32, 32}, std::nullopt};
  out.push_back(std::move(*ImagePreprocessor::Create(crop, rgb)));
  inferd::config::PreprocessConfig exact = crop;
  exact.resize = 0;
  exact.center_crop = 0;
  exact.width = 24;
  exact.height = 16;
  inferd::config::TensorSpec bf16{"image", inferd::DataType::kBf16, {3, 16, 24}, std::nullopt};
  out.push_back(std::move(*ImagePreprocessor::Create(exact, bf16)));
  inferd::config::PreprocessConfig gray = crop;
  gray.color = inferd::config::ColorOrder::kGrayscale;
  gray.resize = 8;
  gray.center_crop = 8;
  inferd::config::TensorSpec one{"image", inferd::DataType::kFp32, {1, 8, 8}, std::nullopt};
  out.push_back(std::move(*ImagePreprocessor::Create(gray, one)));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto preprocessors = Make();
  if (size < 1) return 0;
  const ImagePreprocessor& p = *preprocessors[data[0] % preprocessors.size()];
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto tensor = p.Run({bytes});
  if (!tensor.ok()) {
    inferd::fuzz::CheckClientError(tensor.status());
    return 0;
  }
  inferd::fuzz::CheckTensor(*tensor);
  return 0;
}
