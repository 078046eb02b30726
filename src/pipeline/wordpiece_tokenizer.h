// WordPieceTokenizer: BERT's tokenizer (vocab.txt), text -> token ids.
//
// Follows Hugging Face transformers' BertTokenizer (BasicTokenizer then
// WordpieceTokenizer, as of 4.3x): drop NUL, U+FFFD and control characters,
// map whitespace to spaces, put spaces around CJK ideographs, NFC, split on
// whitespace, lowercase (full Unicode case mapping) and strip accents (NFD,
// drop non-spacing marks) as configured, split off punctuation (ASCII symbols
// and Unicode P*), then greedy longest-match-first word pieces with "##"
// continuations; a word longer than 100 characters or with no match is [UNK].
// Special tokens written in the text are NOT recognised as such.
// Unicode tables come from ICU (libicu); tools/wordpiece_reference.py is the
// Python reference it is tested against.
// Immutable after Create; Encode is const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "pipeline/text_tokenizer.h"

namespace inferd::pipeline {

class WordPieceTokenizer : public TextTokenizer {
 public:
  struct Options {
    std::string vocab_path;  // one token per line; the line number is the id
    bool lowercase = true;
    bool strip_accents = true;  // BERT uncased: true; cased: false
  };
  // kFailedPrecondition when the vocab is unreadable or lacks [UNK]/[CLS]/[SEP]/[PAD].
  static StatusOr<std::unique_ptr<WordPieceTokenizer>> Create(const Options& options);

  // Word pieces of `text` (UTF-8), without [CLS]/[SEP]. kInvalidArgument for bad UTF-8.
  StatusOr<std::vector<int64_t>> Tokenize(std::string_view text) const override;
  // The pieces as strings (for tests and debugging).
  StatusOr<std::vector<std::string>> TokenizeToStrings(std::string_view text) const;

  std::optional<int64_t> prefix_id() const override { return cls_id_; }
  std::optional<int64_t> suffix_id() const override { return sep_id_; }
  int64_t pad_id() const override { return pad_id_; }
  int64_t cls_id() const { return cls_id_; }
  int64_t sep_id() const { return sep_id_; }
  int64_t unk_id() const { return unk_id_; }
  size_t vocab_size() const { return vocab_.size(); }

 private:
  WordPieceTokenizer() = default;
  // Basic tokenization: UTF-8 text -> words (UTF-32), punctuation split off.
  StatusOr<std::vector<std::u32string>> BasicTokenize(std::string_view text) const;
  // Appends the pieces of one word (ids, and strings when `strings` is set).
  void WordPieces(const std::u32string& word, std::vector<int64_t>* ids,
                  std::vector<std::string>* strings) const;

  Options options_;
  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> tokens_;
  int64_t cls_id_ = 0, sep_id_ = 0, pad_id_ = 0, unk_id_ = 0;
};

}  // namespace inferd::pipeline
