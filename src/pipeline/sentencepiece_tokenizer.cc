#include "pipeline/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

namespace inferd::pipeline {

SentencePieceTokenizer::SentencePieceTokenizer()
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Create(const std::string& model_path) {
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  const auto status = t->processor_->Load(model_path);
  if (!status.ok()) {
    return FailedPrecondition("preprocess.vocab: cannot load SentencePiece model '" + model_path +
                              "': " + status.ToString());
  }
  if (t->processor_->bos_id() >= 0) t->bos_ = t->processor_->bos_id();
  if (t->processor_->eos_id() >= 0) t->eos_ = t->processor_->eos_id();
  t->pad_ = t->processor_->pad_id() >= 0 ? t->processor_->pad_id() : 0;
  return t;
}

StatusOr<std::vector<int64_t>> SentencePieceTokenizer::Tokenize(std::string_view text) const {
  std::u32string unused;
  if (!DecodeUtf8(text, &unused)) return InvalidArgument("text is not valid UTF-8");
  std::vector<int> ids;
  const auto status = processor_->Encode(absl::string_view(text.data(), text.size()), &ids);
  if (!status.ok()) return InvalidArgument("SentencePiece: " + status.ToString());
  return std::vector<int64_t>(ids.begin(), ids.end());
}

}  // namespace inferd::pipeline
