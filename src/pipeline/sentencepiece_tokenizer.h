// SentencePieceTokenizer: a SentencePiece model (.model) via libsentencepiece,
// text -> ids, exactly as python3-sentencepiece's `encode(text)` (same library).
//
// Special tokens: the model's BOS before the text and its EOS after it when the
// model defines them (bos_id/eos_id >= 0), its pad id for padding (0 when the
// model has none). Models that need another convention (fairseq's +1 offset of
// XLM-R, ALBERT's [CLS]/[SEP] pieces) are not covered.
// Immutable after Create; Tokenize is const and thread-safe (libsentencepiece's
// Encode is const and keeps no per-call state in the processor).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "pipeline/text_tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace inferd::pipeline {

class SentencePieceTokenizer : public TextTokenizer {
 public:
  // kFailedPrecondition when the model file is missing or not a SentencePiece model.
  static StatusOr<std::unique_ptr<SentencePieceTokenizer>> Create(const std::string& model_path);
  ~SentencePieceTokenizer() override;

  StatusOr<std::vector<int64_t>> Tokenize(std::string_view text) const override;
  std::optional<int64_t> prefix_id() const override { return bos_; }
  std::optional<int64_t> suffix_id() const override { return eos_; }
  int64_t pad_id() const override { return pad_; }

 private:
  SentencePieceTokenizer();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::optional<int64_t> bos_, eos_;
  int64_t pad_ = 0;
};

}  // namespace inferd::pipeline
