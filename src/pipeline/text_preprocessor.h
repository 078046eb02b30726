// TextPreprocessor: UTF-8 texts -> input_ids, attention_mask, token_type_ids.
//
// Tokenizers: wordpiece (BERT vocab.txt) or sentencepiece (.model).
// Each text becomes [CLS] pieces [SEP] (SentencePiece: <s> pieces </s> when
// the model defines them), cut to max_length tokens (or answered
// with kInvalidArgument when `truncation: false`), and the items of one request
// are padded with [PAD] (mask 0) to the longest of them, or to the input's
// fixed length when its shape is [L]. Requests of different lengths in one
// batch are padded further by the scheduler with each input's pad_value
// (default 0, which is [PAD] in BERT vocabularies).
// The model's inputs are matched by name: input_ids (required),
// attention_mask, token_type_ids; INT64 or INT32; shape [-1] or [L].
// Immutable after Create; Run is const and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "config/model_config.h"
#include "pipeline/text_tokenizer.h"

namespace inferd::pipeline {

// A text item larger than this answers kPayloadTooLarge before tokenizing.
inline constexpr size_t kMaxTextBytes = 1 << 20;

class TextPreprocessor {
 public:
  // kFailedPrecondition for an unknown tokenizer, unreadable vocab or inputs
  // that are not the three above.
  static StatusOr<std::unique_ptr<TextPreprocessor>> Create(const config::ModelConfig& config,
                                                            const std::string& model_dir);

  // One tensor per model input, in the config's order, batch dim first.
  StatusOr<std::vector<NamedTensor>> Run(const std::vector<std::string_view>& texts) const;

 private:
  TextPreprocessor() = default;
  enum class Role { kIds, kMask, kTypes };
  struct Input {
    std::string name;
    Role role;
    DataType dtype;
    int64_t fixed_length;  // -1 = pad to the longest item
  };

  std::unique_ptr<TextTokenizer> tokenizer_;
  std::vector<Input> inputs_;
  int max_length_ = 128;
  bool truncation_ = true;
};

}  // namespace inferd::pipeline
