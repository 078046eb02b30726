// SentencePieceTokenizer: a SentencePiece model (.model), text -> ids, exactly
// as python3-sentencepiece's `encode(text)` (same library).
//
// libsentencepiece is reached through libinferd_sentencepiece.so, loaded with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) (see sentencepiece_module.cc: Debian's
// libsentencepiece exports an embedded protobuf 3.14 that would clash with
// libtorch's protobuf 3.21 in one process; sanitizer builds use dlmopen into a
// namespace of its own and serialise the calls). The module is looked up at
// $INFERD_SENTENCEPIECE_MODULE, then where the build put it, then next to the
// executable.
// Special tokens: the model's BOS before the text and EOS after it when the
// model defines them, its pad id for padding (0 when it has none). Models that
// need another convention (fairseq's +1 offset of XLM-R, ALBERT's [CLS]/[SEP]
// pieces) are not covered.
// Immutable after Create; Tokenize is const and thread-safe (libsentencepiece's
// Encode is const).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "pipeline/text_tokenizer.h"

namespace inferd::pipeline {

class SentencePieceTokenizer : public TextTokenizer {
 public:
  // kFailedPrecondition when the module or the model cannot be loaded.
  static StatusOr<std::unique_ptr<SentencePieceTokenizer>> Create(const std::string& model_path);
  ~SentencePieceTokenizer() override;

  StatusOr<std::vector<int64_t>> Tokenize(std::string_view text) const override;
  std::optional<int64_t> prefix_id() const override { return bos_; }
  std::optional<int64_t> suffix_id() const override { return eos_; }
  int64_t pad_id() const override { return pad_; }

  struct Module;  // the loaded module's entry points (opaque)

 private:
  SentencePieceTokenizer() = default;

  const Module* module_ = nullptr;  // process-wide, never unloaded
  void* handle_ = nullptr;          // a SentencePieceProcessor inside the module
  std::optional<int64_t> bos_, eos_;
  int64_t pad_ = 0;
};

}  // namespace inferd::pipeline
