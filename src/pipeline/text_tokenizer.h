// TextTokenizer: the interface TextPreprocessor tokenizes through, so that
// WordPiece (BERT vocab.txt) and SentencePiece (.model) models share the
// padding, truncation and tensor code.
// Implementations are immutable after creation; Tokenize is const and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::pipeline {

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // Token ids of `text` (UTF-8) without the special tokens around it.
  // kInvalidArgument for malformed UTF-8.
  virtual StatusOr<std::vector<int64_t>> Tokenize(std::string_view text) const = 0;
  virtual std::optional<int64_t> prefix_id() const = 0;  // [CLS], <s>; none = nothing before
  virtual std::optional<int64_t> suffix_id() const = 0;  // [SEP], </s>; none = nothing after
  virtual int64_t pad_id() const = 0;
};

// UTF-8 -> code points; false on malformed input (overlong forms, surrogates,
// past U+10FFFF, cut sequences).
bool DecodeUtf8(std::string_view s, std::u32string* out);

}  // namespace inferd::pipeline
