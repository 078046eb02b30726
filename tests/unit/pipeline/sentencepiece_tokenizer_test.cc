#include "pipeline/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "pipeline/text_preprocessor.h"
#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;
using testing::FixtureDir;
using testing::Unescape;

TEST(SentencePieceTokenizerTest, MatchesPythonSentencePiece) {
  auto t = SentencePieceTokenizer::Create(FixtureDir() + "/spm_test.model");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->prefix_id(), std::optional<int64_t>(1));
  EXPECT_EQ((*t)->suffix_id(), std::optional<int64_t>(2));
  EXPECT_EQ((*t)->pad_id(), 3);
  std::stringstream lines(Fixture("spm_cases.txt"));
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    std::vector<int64_t> expected;
    std::stringstream ids(line.substr(tab + 1));
    for (int64_t id; ids >> id;) expected.push_back(id);
    auto got = (*t)->Tokenize(Unescape(line.substr(0, tab)));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, expected) << line.substr(0, tab);
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(SentencePieceTokenizerTest, Errors) {
  auto missing = SentencePieceTokenizer::Create(FixtureDir() + "/no_such.model");
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(SentencePieceTokenizer::Create(FixtureDir() + "/cases.txt").status().code(),
            StatusCode::kFailedPrecondition);
  auto t = SentencePieceTokenizer::Create(FixtureDir() + "/spm_test.model");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->Tokenize("bad \xFF utf8").status().code(), StatusCode::kInvalidArgument);
}

TEST(SentencePieceTokenizerTest, TextPreprocessorAddsBosEosAndPads) {
  config::ModelConfig c;
  c.inputs.push_back({"input_ids", DataType::kInt64, {-1}, std::nullopt});
  c.inputs.push_back({"attention_mask", DataType::kInt64, {-1}, std::nullopt});
  c.preprocess.kind = config::PreprocessKind::kText;
  c.preprocess.tokenizer = config::Tokenizer::kSentencepiece;
  c.preprocess.vocab = "spm_test.model";
  c.preprocess.max_length = 64;
  auto pre = TextPreprocessor::Create(c, FixtureDir());
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  auto t = SentencePieceTokenizer::Create(FixtureDir() + "/spm_test.model");
  ASSERT_TRUE(t.ok());
  auto short_ids = (*t)->Tokenize("Hello, world!");
  auto long_ids = (*t)->Tokenize("The quick brown fox jumps over the lazy dog.");
  ASSERT_TRUE(short_ids.ok() && long_ids.ok());
  auto out = (*pre)->Run({"Hello, world!", "The quick brown fox jumps over the lazy dog."});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& ids = (*out)[0].tensor;
  const int64_t len = static_cast<int64_t>(long_ids->size()) + 2;
  ASSERT_EQ(ids.shape(), (Shape{2, len}));
  const int64_t* row0 = ids.data_as<int64_t>();
  EXPECT_EQ(row0[0], 1);
  EXPECT_EQ(row0[short_ids->size() + 1], 2);
  EXPECT_EQ(row0[len - 1], 3);  // pad
  EXPECT_EQ((*out)[1].tensor.data_as<int64_t>()[len - 1], 0);
  EXPECT_EQ((*out)[1].tensor.data_as<int64_t>()[len + len - 1], 1);
}

}  // namespace
}  // namespace inferd::pipeline
