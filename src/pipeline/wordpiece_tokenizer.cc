#include "pipeline/wordpiece_tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <fstream>

namespace inferd::pipeline {
namespace {

constexpr size_t kMaxCharsPerWord = 100;

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::u16string ToUtf16(const std::u32string& s) {
  std::u16string out;
  out.reserve(s.size());
  for (char32_t cp : s) {
    if (cp < 0x10000) {
      out.push_back(static_cast<char16_t>(cp));
    } else {
      out.push_back(static_cast<char16_t>(U16_LEAD(cp)));
      out.push_back(static_cast<char16_t>(U16_TRAIL(cp)));
    }
  }
  return out;
}

std::u32string ToUtf32(const std::u16string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    UChar32 cp;
    U16_NEXT(s.data(), i, s.size(), cp);
    out.push_back(static_cast<char32_t>(cp));
  }
  return out;
}

// Applies an ICU UTF-16 transform that may need a bigger buffer.
template <typename Fn>
std::u16string Transform16(const std::u16string& in, Fn fn) {
  std::u16string out(in.size() + 16, u'\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = fn(reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
                   reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<size_t>(n), u'\0');
      continue;
    }
    if (U_FAILURE(status)) return in;
    out.resize(static_cast<size_t>(n));
    return out;
  }
  return in;
}

std::u32string Normalize(const std::u32string& s, bool decompose) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* norm =
      decompose ? unorm2_getNFDInstance(&status) : unorm2_getNFCInstance(&status);
  if (U_FAILURE(status)) return s;
  return ToUtf32(Transform16(
      ToUtf16(s), [norm](const UChar* in, int32_t n, UChar* out, int32_t cap, UErrorCode* st) {
        return unorm2_normalize(norm, in, n, out, cap, st);
      }));
}

std::u32string Lower(const std::u32string& s) {
  return ToUtf32(Transform16(
      ToUtf16(s), [](const UChar* in, int32_t n, UChar* out, int32_t cap, UErrorCode* st) {
        return u_strToLower(out, cap, in, n, "", st);
      }));
}

bool IsWhitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
}

bool IsControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(c)) {  // Python's category "C*": Cc, Cf, Cs, Co, Cn
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
      return true;
    default:
      return false;
  }
}

bool IsPunctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  switch (u_charType(c)) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool IsCjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Python's str.split(): runs of whitespace separate words.
bool IsSplitSpace(char32_t c) { return c == ' ' || u_isUWhiteSpace(c); }

}  // namespace

StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Create(const Options& options) {
  std::ifstream in(options.vocab_path);
  if (!in) return FailedPrecondition("preprocess.vocab: cannot read '" + options.vocab_path + "'");
  std::unique_ptr<WordPieceTokenizer> t(new WordPieceTokenizer());
  t->options_ = options;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    t->vocab_.emplace(line, static_cast<int64_t>(t->tokens_.size()));  // first occurrence wins
    t->tokens_.push_back(line);
  }
  struct Special {
    const char* token;
    int64_t* id;
  } specials[] = {{"[UNK]", &t->unk_id_},
                  {"[CLS]", &t->cls_id_},
                  {"[SEP]", &t->sep_id_},
                  {"[PAD]", &t->pad_id_}};
  for (const auto& s : specials) {
    auto it = t->vocab_.find(s.token);
    if (it == t->vocab_.end()) {
      return FailedPrecondition("preprocess.vocab: '" + options.vocab_path + "' has no " + s.token +
                                " token");
    }
    *s.id = it->second;
  }
  return t;
}

StatusOr<std::vector<std::u32string>> WordPieceTokenizer::BasicTokenize(
    std::string_view text) const {
  std::u32string decoded;
  if (!DecodeUtf8(text, &decoded)) return InvalidArgument("text is not valid UTF-8");
  std::u32string cleaned;
  cleaned.reserve(decoded.size());
  for (char32_t c : decoded) {
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsCjk(c)) {
      cleaned += U' ';
      cleaned += c;
      cleaned += U' ';
    } else {
      cleaned += IsWhitespace(c) ? U' ' : c;
    }
  }
  cleaned = Normalize(cleaned, /*decompose=*/false);
  std::vector<std::u32string> words;
  std::u32string token;
  auto flush = [&]() {
    if (token.empty()) return;
    std::u32string t = token;
    token.clear();
    if (options_.lowercase) t = Lower(t);
    if (options_.strip_accents) {
      std::u32string stripped;
      for (char32_t c : Normalize(t, /*decompose=*/true)) {
        if (u_charType(c) != U_NON_SPACING_MARK) stripped += c;
      }
      t = std::move(stripped);
    }
    std::u32string word;  // punctuation characters become words of their own
    for (char32_t c : t) {
      if (IsPunctuation(c)) {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
        words.push_back(std::u32string(1, c));
      } else if (IsSplitSpace(c)) {  // lowercasing/NFD can not make spaces, but stay safe
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty()) words.push_back(std::move(word));
  };
  for (char32_t c : cleaned) {
    if (IsSplitSpace(c))
      flush();
    else
      token += c;
  }
  flush();
  return words;
}

void WordPieceTokenizer::WordPieces(const std::u32string& word, std::vector<int64_t>* ids,
                                    std::vector<std::string>* strings) const {
  auto unk = [&]() {
    ids->push_back(unk_id_);
    if (strings) strings->push_back(tokens_[unk_id_]);
  };
  if (word.size() > kMaxCharsPerWord) return unk();
  std::vector<int64_t> piece_ids;
  size_t start = 0;
  std::string candidate;
  while (start < word.size()) {
    size_t end = word.size();
    int64_t found = -1;
    while (start < end) {
      candidate = start > 0 ? "##" : "";
      for (size_t i = start; i < end; ++i) AppendUtf8(word[i], &candidate);
      auto it = vocab_.find(candidate);
      if (it != vocab_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) return unk();
    piece_ids.push_back(found);
    start = end;
  }
  for (int64_t id : piece_ids) {
    ids->push_back(id);
    if (strings) strings->push_back(tokens_[id]);
  }
}

StatusOr<std::vector<int64_t>> WordPieceTokenizer::Tokenize(std::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<std::u32string> words, BasicTokenize(text));
  std::vector<int64_t> ids;
  for (const auto& w : words) WordPieces(w, &ids, nullptr);
  return ids;
}

StatusOr<std::vector<std::string>> WordPieceTokenizer::TokenizeToStrings(
    std::string_view text) const {
  ASSIGN_OR_RETURN(std::vector<std::u32string> words, BasicTokenize(text));
  std::vector<int64_t> ids;
  std::vector<std::string> strings;
  for (const auto& w : words) WordPieces(w, &ids, &strings);
  return strings;
}

}  // namespace inferd::pipeline
