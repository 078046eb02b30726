#include "pipeline/wordpiece_tokenizer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;
using testing::FixtureDir;
using testing::Unescape;

std::unique_ptr<WordPieceTokenizer> Make(bool lowercase) {
  WordPieceTokenizer::Options o;
  o.vocab_path = FixtureDir() + "/wordpiece_vocab.txt";
  o.lowercase = lowercase;
  o.strip_accents = lowercase;
  auto t = WordPieceTokenizer::Create(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(*t) : nullptr;
}

TEST(WordPieceTokenizerTest, MatchesThePythonReference) {
  auto uncased = Make(true);
  auto cased = Make(false);
  ASSERT_TRUE(uncased && cased);
  std::stringstream lines(Fixture("wordpiece_cases.txt"));
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t a = line.find('\t'), b = line.find('\t', a + 1);
    ASSERT_NE(b, std::string::npos) << line;
    const bool lowercase = line[0] == '1';
    const std::string text = Unescape(line.substr(a + 1, b - a - 1));
    const std::string expected = line.substr(b + 1);
    auto pieces = (lowercase ? uncased : cased)->TokenizeToStrings(text);
    ASSERT_TRUE(pieces.ok()) << pieces.status().ToString();
    std::string got;
    for (const auto& p : *pieces) got += (got.empty() ? "" : " ") + p;
    EXPECT_EQ(got, expected) << "text: " << line.substr(a + 1, b - a - 1)
                             << " lowercase=" << lowercase;
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(WordPieceTokenizerTest, IdsAreVocabLineNumbers) {
  auto t = Make(true);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->pad_id(), 0);
  EXPECT_EQ(t->unk_id(), 1);
  EXPECT_EQ(t->cls_id(), 2);
  EXPECT_EQ(t->sep_id(), 3);
  auto ids = t->Tokenize("the quick");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int64_t>{5, 6}));  // lines 6 and 7 of the vocab
}

TEST(WordPieceTokenizerTest, BadUtf8AndMissingVocab) {
  auto t = Make(true);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Tokenize("ok \xC3").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t->Tokenize("\xED\xA0\x80").status().code(),
            StatusCode::kInvalidArgument);                                           // surrogate
  EXPECT_EQ(t->Tokenize("\xC0\xAF").status().code(), StatusCode::kInvalidArgument);  // overlong
  WordPieceTokenizer::Options o;
  o.vocab_path = FixtureDir() + "/no_such_vocab.txt";
  auto missing = WordPieceTokenizer::Create(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such_vocab.txt"), std::string::npos);
  o.vocab_path = FixtureDir() + "/cases.txt";  // no [UNK] in it
  EXPECT_EQ(WordPieceTokenizer::Create(o).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace inferd::pipeline
