#include "config/choices.h"

#include <array>
#include <utility>

namespace inferd::config {
namespace {

template <typename T, size_t N>
using Table = std::array<std::pair<T, std::string_view>, N>;

// One table per enum: its values and their config spellings, in the order
// the error messages list them.
constexpr Table<BackendKind, 4> kBackends{{{BackendKind::kTorchscript, "torchscript"},
                                           {BackendKind::kOnnxruntime, "onnxruntime"},
                                           {BackendKind::kXgboost, "xgboost"},
                                           {BackendKind::kPython, "python"}}};
constexpr Table<Precision, 4> kPrecisions{{{Precision::kAuto, "auto"},
                                           {Precision::kFp32, "fp32"},
                                           {Precision::kBf16, "bf16"},
                                           {Precision::kInt8, "int8"}}};
constexpr Table<Variants, 4> kVariants{
    {{Variants::kAuto, "auto"},
     {Variants::kFrozen, "frozen"},
     {Variants::kChannelsLast, "channels_last"},
     {Variants::kOptimizeForInference, "optimize_for_inference"}}};
constexpr Table<LoadChoice, 2> kLoads{{{LoadChoice::kEager, "eager"}, {LoadChoice::kLazy, "lazy"}}};
constexpr Table<Isolation, 2> kIsolations{
    {{Isolation::kThread, "thread"}, {Isolation::kProcess, "process"}}};
constexpr Table<PreprocessKind, 3> kPreprocessKinds{{{PreprocessKind::kImage, "image"},
                                                     {PreprocessKind::kText, "text"},
                                                     {PreprocessKind::kBytes, "bytes"}}};
constexpr Table<ColorOrder, 3> kColors{
    {{ColorOrder::kRgb, "rgb"}, {ColorOrder::kBgr, "bgr"}, {ColorOrder::kGrayscale, "grayscale"}}};
constexpr Table<Tokenizer, 2> kTokenizers{
    {{Tokenizer::kWordpiece, "wordpiece"}, {Tokenizer::kSentencepiece, "sentencepiece"}}};
constexpr Table<PostprocessKind, 5> kPostprocessKinds{{{PostprocessKind::kTopk, "topk"},
                                                       {PostprocessKind::kArgmax, "argmax"},
                                                       {PostprocessKind::kSoftmax, "softmax"},
                                                       {PostprocessKind::kSigmoid, "sigmoid"},
                                                       {PostprocessKind::kRaw, "raw"}}};

template <typename T>
struct TableOf;
template <>
struct TableOf<BackendKind> {
  static constexpr const auto& kTable = kBackends;
};
template <>
struct TableOf<Precision> {
  static constexpr const auto& kTable = kPrecisions;
};
template <>
struct TableOf<Variants> {
  static constexpr const auto& kTable = kVariants;
};
template <>
struct TableOf<LoadChoice> {
  static constexpr const auto& kTable = kLoads;
};
template <>
struct TableOf<Isolation> {
  static constexpr const auto& kTable = kIsolations;
};
template <>
struct TableOf<PreprocessKind> {
  static constexpr const auto& kTable = kPreprocessKinds;
};
template <>
struct TableOf<ColorOrder> {
  static constexpr const auto& kTable = kColors;
};
template <>
struct TableOf<Tokenizer> {
  static constexpr const auto& kTable = kTokenizers;
};
template <>
struct TableOf<PostprocessKind> {
  static constexpr const auto& kTable = kPostprocessKinds;
};

template <typename T>
std::string_view NameIn(T v) {
  for (const auto& [value, name] : TableOf<T>::kTable) {
    if (value == v) return name;
  }
  return "";  // the "none" values (kServerDefault, kNone) have no spelling
}

}  // namespace

std::string_view Name(BackendKind v) { return NameIn(v); }
std::string_view Name(Precision v) { return NameIn(v); }
std::string_view Name(Variants v) { return NameIn(v); }
std::string_view Name(LoadChoice v) { return NameIn(v); }
std::string_view Name(Isolation v) { return NameIn(v); }
std::string_view Name(PreprocessKind v) { return NameIn(v); }
std::string_view Name(ColorOrder v) { return NameIn(v); }
std::string_view Name(Tokenizer v) { return NameIn(v); }
std::string_view Name(PostprocessKind v) { return NameIn(v); }

template <typename T>
std::optional<T> ParseChoice(std::string_view text) {
  for (const auto& [value, name] : TableOf<T>::kTable) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <typename T>
std::string ChoiceList() {
  const auto& table = TableOf<T>::kTable;
  std::string out;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i > 0) out += i + 1 == table.size() ? " or " : ", ";
    out += table[i].second;
  }
  return out;
}

#define INFERD_CHOICE(T)                                           \
  template std::optional<T> ParseChoice<T>(std::string_view text); \
  template std::string ChoiceList<T>();
INFERD_CHOICE(BackendKind)
INFERD_CHOICE(Precision)
INFERD_CHOICE(Variants)
INFERD_CHOICE(LoadChoice)
INFERD_CHOICE(Isolation)
INFERD_CHOICE(PreprocessKind)
INFERD_CHOICE(ColorOrder)
INFERD_CHOICE(Tokenizer)
INFERD_CHOICE(PostprocessKind)
#undef INFERD_CHOICE

}  // namespace inferd::config
