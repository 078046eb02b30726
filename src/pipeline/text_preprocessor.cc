#include "pipeline/text_preprocessor.h"

#include <algorithm>

#include "pipeline/sentencepiece_tokenizer.h"
#include "pipeline/wordpiece_tokenizer.h"

namespace inferd::pipeline {
namespace {

void Store(DataType dtype, std::byte* base, int64_t index, int64_t value) {
  if (dtype == DataType::kInt64) {
    reinterpret_cast<int64_t*>(base)[index] = value;
  } else {
    reinterpret_cast<int32_t*>(base)[index] = static_cast<int32_t>(value);
  }
}

}  // namespace

StatusOr<std::unique_ptr<TextPreprocessor>> TextPreprocessor::Create(
    const config::ModelConfig& config, const std::string& model_dir) {
  const config::PreprocessConfig& c = config.preprocess;
  if (c.vocab.empty()) return FailedPrecondition("preprocess.vocab: required for kind: text");
  if (c.max_length < 2) return FailedPrecondition("preprocess.max_length: expected >= 2");
  std::unique_ptr<TextPreprocessor> p(new TextPreprocessor());
  p->max_length_ = c.max_length;
  p->truncation_ = c.truncation;
  const std::string vocab = c.vocab.front() == '/' ? c.vocab : model_dir + "/" + c.vocab;
  if (c.tokenizer == config::Tokenizer::kWordpiece) {
    WordPieceTokenizer::Options options;
    options.vocab_path = vocab;
    options.lowercase = c.lowercase;
    options.strip_accents = c.strip_accents;
    ASSIGN_OR_RETURN(p->tokenizer_, WordPieceTokenizer::Create(options));
  } else {
    ASSIGN_OR_RETURN(p->tokenizer_, SentencePieceTokenizer::Create(vocab));
  }
  bool have_ids = false;
  for (const auto& spec : config.inputs) {
    Input in{spec.name, Role::kIds, spec.dtype, -1};
    if (spec.name == "input_ids")
      in.role = Role::kIds, have_ids = true;
    else if (spec.name == "attention_mask")
      in.role = Role::kMask;
    else if (spec.name == "token_type_ids")
      in.role = Role::kTypes;
    else {
      return FailedPrecondition("preprocess (text): input '" + spec.name +
                                "' is not one of input_ids, attention_mask, token_type_ids");
    }
    if (spec.dtype != DataType::kInt64 && spec.dtype != DataType::kInt32) {
      return FailedPrecondition("preprocess (text): input '" + spec.name +
                                "' must be INT64 or INT32");
    }
    if (spec.dims.size() != 1 || spec.dims[0] == 0 || spec.dims[0] < -1) {
      return FailedPrecondition("preprocess (text): input '" + spec.name +
                                "' must have shape [-1] or [L], got " + ShapeToString(spec.dims));
    }
    in.fixed_length = spec.dims[0];
    if (in.fixed_length == 1) {
      return FailedPrecondition("preprocess (text): input '" + spec.name +
                                "' must hold at least 2 tokens");
    }
    if (in.fixed_length > 0) p->max_length_ = std::min<int64_t>(p->max_length_, in.fixed_length);
    p->inputs_.push_back(in);
  }
  if (!have_ids)
    return FailedPrecondition("preprocess (text): the model needs an input named input_ids");
  return p;
}

StatusOr<std::vector<NamedTensor>> TextPreprocessor::Run(
    const std::vector<std::string_view>& texts) const {
  if (texts.empty()) return InvalidArgument("no text in the request");
  std::vector<std::vector<int64_t>> items(texts.size());
  size_t longest = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string item = texts.size() > 1 ? "item " + std::to_string(i) + ": " : "";
    if (texts[i].size() > kMaxTextBytes) {
      return PayloadTooLarge(item + "text of " + std::to_string(texts[i].size()) +
                             " bytes is past the limit of " + std::to_string(kMaxTextBytes));
    }
    auto pieces = tokenizer_->Tokenize(texts[i]);
    if (!pieces.ok())
      return pieces.status().WithContext(item.empty() ? "text" : item.substr(0, item.size() - 2));
    const auto prefix = tokenizer_->prefix_id();
    const auto suffix = tokenizer_->suffix_id();
    const size_t specials = (prefix ? 1 : 0) + (suffix ? 1 : 0);
    const size_t room = static_cast<size_t>(max_length_) - specials;
    if (pieces->size() > room) {
      if (!truncation_) {
        return InvalidArgument(item + "text has " + std::to_string(pieces->size() + specials) +
                               " tokens, more than max_length " + std::to_string(max_length_) +
                               " (preprocess.truncation is off)");
      }
      pieces->resize(room);
    }
    auto& ids = items[i];
    ids.reserve(pieces->size() + specials);
    if (prefix) ids.push_back(*prefix);
    ids.insert(ids.end(), pieces->begin(), pieces->end());
    if (suffix) ids.push_back(*suffix);
    longest = std::max(longest, ids.size());
  }
  std::vector<NamedTensor> out;
  const int64_t n = static_cast<int64_t>(items.size());
  for (const auto& in : inputs_) {
    const int64_t length = in.fixed_length > 0 ? in.fixed_length : static_cast<int64_t>(longest);
    // Every element is stored below (ids, mask or types, padding included).
    Tensor t = Tensor::AllocateUninitialized(in.dtype, {n, length});
    std::byte* base = t.mutable_data();
    for (int64_t i = 0; i < n; ++i) {
      const auto& ids = items[static_cast<size_t>(i)];
      for (int64_t j = 0; j < length; ++j) {
        const bool real = j < static_cast<int64_t>(ids.size());
        int64_t v = 0;
        switch (in.role) {
          case Role::kIds:
            v = real ? ids[static_cast<size_t>(j)] : tokenizer_->pad_id();
            break;
          case Role::kMask:
            v = real ? 1 : 0;
            break;
          case Role::kTypes:
            v = 0;
            break;
        }
        Store(in.dtype, base, i * length + j, v);
      }
    }
    out.push_back({in.name, std::move(t)});
  }
  return out;
}

}  // namespace inferd::pipeline
