#include "optimize/comparison_samples.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "pipeline/image_preprocessor.h"
#include "pipeline/text_preprocessor.h"

namespace inferd::optimize {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSampleFiles = 8;
constexpr int64_t kDrawnVariableDim = 8;

const char* const kBuiltInTexts[] = {
    "utilities for archives",
    "The quick brown fox jumps over the lazy dog.",
    "A library for reading and writing compressed files, with a command line tool.",
    ("This package contains the documentation of the command line tools, with examples of "
     "their use in shell scripts and a reference of every option they take."),
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The files of DIR/<model>/samples/ whose extension is one of `exts`, sorted.
std::vector<fs::path> SampleFiles(const std::string& model_dir,
                                  const std::vector<std::string>& exts) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::directory_iterator it(fs::path(model_dir) / "samples", ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string ext = Lower(it->path().extension().string());
    if (std::find(exts.begin(), exts.end(), ext) != exts.end()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  if (files.size() > kMaxSampleFiles) files.resize(kMaxSampleFiles);
  return files;
}

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read '" + path.string() + "'");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Items [1, ...] of one shape joined into one batch [n, ...], per input.
std::vector<NamedTensor> Join(const std::vector<std::vector<NamedTensor>>& items) {
  std::vector<NamedTensor> batch;
  for (size_t i = 0; i < items[0].size(); ++i) {
    const Tensor& first = items[0][i].tensor;
    Shape shape = first.shape();
    shape[0] = static_cast<int64_t>(items.size());
    Tensor t = Tensor::Allocate(first.dtype(), shape);
    for (size_t k = 0; k < items.size(); ++k) {
      std::memcpy(t.mutable_data() + k * first.byte_size(), items[k][i].tensor.data(),
                  first.byte_size());
    }
    batch.push_back({items[0][i].name, std::move(t)});
  }
  return batch;
}

template <typename T, typename Draw>
void Fill(Tensor& t, Draw draw) {
  T* p = t.mutable_data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<T>(draw(i));
}

StatusOr<std::vector<NamedTensor>> DrawItem(const config::ModelConfig& config, std::mt19937& rng) {
  std::vector<NamedTensor> item;
  const bool image = config.preprocess.kind == config::PreprocessKind::kImage;
  for (const auto& spec : config.inputs) {
    Shape shape = {1};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? kDrawnVariableDim : d);
    Tensor t = Tensor::Allocate(spec.dtype, shape);
    std::normal_distribution<double> normal(0, 1);
    std::uniform_int_distribution<int> pixel(0, 255);
    switch (spec.dtype) {
      case DataType::kFp32:
      case DataType::kFp64: {
        // An image input [C, H, W]: a pixel normalized as the pre-processing would.
        const auto& pre = config.preprocess;
        const int64_t plane = shape.size() == 4 ? shape[2] * shape[3] : 0;
        auto value = [&](int64_t i) -> double {
          if (!image || plane == 0) return normal(rng);
          const size_t c = static_cast<size_t>(i / plane);
          double v = pixel(rng) * pre.scale;
          if (c < pre.mean.size()) v -= pre.mean[c];
          if (c < pre.std.size()) v /= pre.std[c];
          return v;
        };
        if (spec.dtype == DataType::kFp32) {
          Fill<float>(t, value);
        } else {
          Fill<double>(t, value);
        }
        break;
      }
      case DataType::kBool:
      case DataType::kUint8:
        Fill<uint8_t>(t, [](int64_t) { return 1; });
        break;
      case DataType::kInt8:
        Fill<int8_t>(t, [](int64_t) { return 1; });
        break;
      case DataType::kInt16:
        Fill<int16_t>(t, [](int64_t) { return 1; });
        break;
      case DataType::kInt32:
        Fill<int32_t>(t, [](int64_t) { return 1; });
        break;
      case DataType::kInt64:
        Fill<int64_t>(t, [](int64_t) { return 1; });
        break;
      case DataType::kFp16:
      case DataType::kBf16:
        break;  // zeros
      case DataType::kBytes:
        return InvalidArgument("model '" + config.name + "': input '" + spec.name +
                               "' is BYTES: no samples can be drawn for it");
    }
    item.push_back({spec.name, std::move(t)});
  }
  return item;
}

// Each item alone, then batches of at most max_batch_size, made by `batch`.
template <typename MakeBatch>
StatusOr<std::vector<SampleRun>> Runs(const std::vector<std::vector<NamedTensor>>& alone,
                                      int max_batch, MakeBatch batch) {
  std::vector<SampleRun> runs;
  for (const auto& item : alone) runs.push_back({item, 1, true});
  if (max_batch < 2 || alone.size() < 2) return runs;
  for (size_t start = 0; start < alone.size(); start += static_cast<size_t>(max_batch)) {
    const size_t end = std::min(alone.size(), start + static_cast<size_t>(max_batch));
    if (end - start < 2) break;
    ASSIGN_OR_RETURN(std::vector<NamedTensor> inputs, batch(start, end));
    runs.push_back({std::move(inputs), static_cast<int>(end - start), false});
  }
  return runs;
}

}  // namespace

StatusOr<ComparisonSamples> MakeComparisonSamples(const config::ModelConfig& config,
                                                  const std::string& model_dir, int drawn) {
  ComparisonSamples out;
  const std::string where = "model '" + config.name + "': ";
  if (config.inputs.empty()) return InvalidArgument(where + "config.yaml lists no inputs");
  const auto kind = config.preprocess.kind;

  if (kind == config::PreprocessKind::kImage) {
    const auto files = SampleFiles(model_dir, {".png", ".jpg", ".jpeg", ".bmp"});
    if (!files.empty()) {
      auto pre = pipeline::ImagePreprocessor::Create(config.preprocess, config.inputs[0]);
      if (!pre.ok()) return pre.status().WithContext(where + "preprocess");
      std::vector<std::string> images;
      for (const auto& f : files) {
        ASSIGN_OR_RETURN(std::string bytes, ReadFile(f));
        images.push_back(std::move(bytes));
      }
      std::vector<std::vector<NamedTensor>> alone;
      for (size_t i = 0; i < images.size(); ++i) {
        auto t = (*pre)->Run({images[i]});
        if (!t.ok()) return t.status().WithContext(where + files[i].string());
        alone.push_back({{config.inputs[0].name, std::move(*t)}});
      }
      ASSIGN_OR_RETURN(out.runs, Runs(alone, config.max_batch_size, [&](size_t a, size_t b) {
                         return StatusOr<std::vector<NamedTensor>>(
                             Join({alone.begin() + static_cast<std::ptrdiff_t>(a),
                                   alone.begin() + static_cast<std::ptrdiff_t>(b)}));
                       }));
      out.samples = static_cast<int>(alone.size());
      out.source = "images in samples/";
      return out;
    }
  }

  if (kind == config::PreprocessKind::kText) {
    auto pre = pipeline::TextPreprocessor::Create(config, model_dir);
    if (!pre.ok()) return pre.status().WithContext(where + "preprocess");
    std::vector<std::string> texts;
    const auto files = SampleFiles(model_dir, {".txt"});
    for (const auto& f : files) {
      ASSIGN_OR_RETURN(std::string text, ReadFile(f));
      texts.push_back(std::move(text));
    }
    out.source = "texts in samples/";
    if (texts.empty()) {
      texts.assign(std::begin(kBuiltInTexts), std::end(kBuiltInTexts));
      out.source = "built-in texts";
    }
    std::vector<std::vector<NamedTensor>> alone;
    for (const auto& text : texts) {
      ASSIGN_OR_RETURN(std::vector<NamedTensor> item, (*pre)->Run({text}));
      alone.push_back(std::move(item));
    }
    ASSIGN_OR_RETURN(out.runs, Runs(alone, config.max_batch_size, [&](size_t a, size_t b) {
                       std::vector<std::string_view> views(
                           texts.begin() + static_cast<std::ptrdiff_t>(a),
                           texts.begin() + static_cast<std::ptrdiff_t>(b));
                       return (*pre)->Run(views);
                     }));
    out.samples = static_cast<int>(alone.size());
    return out;
  }

  std::mt19937 rng(37);
  std::vector<std::vector<NamedTensor>> alone;
  for (int i = 0; i < drawn; ++i) {
    ASSIGN_OR_RETURN(std::vector<NamedTensor> item, DrawItem(config, rng));
    alone.push_back(std::move(item));
  }
  ASSIGN_OR_RETURN(out.runs, Runs(alone, config.max_batch_size, [&](size_t a, size_t b) {
                     return StatusOr<std::vector<NamedTensor>>(
                         Join({alone.begin() + static_cast<std::ptrdiff_t>(a),
                               alone.begin() + static_cast<std::ptrdiff_t>(b)}));
                   }));
  out.samples = drawn;
  out.source = "drawn for the declared shapes";
  return out;
}

}  // namespace inferd::optimize
