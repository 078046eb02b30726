#include "pipeline/text_preprocessor.h"

#include <gtest/gtest.h>

#include "pipeline/model_hooks.h"
#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::FixtureDir;

config::ModelConfig TextModel(int64_t length = -1) {
  config::ModelConfig c;
  c.name = "bert";
  c.max_batch_size = 8;
  for (const char* name : {"input_ids", "attention_mask", "token_type_ids"}) {
    c.inputs.push_back({name, DataType::kInt64, {length}, 0.0});
  }
  c.preprocess.kind = config::PreprocessKind::kText;
  c.preprocess.tokenizer = config::Tokenizer::kWordpiece;
  c.preprocess.vocab = "wordpiece_vocab.txt";
  c.preprocess.max_length = 8;
  return c;
}

std::vector<int64_t> Row(const Tensor& t, int64_t i) {
  const int64_t len = t.shape()[1];
  return std::vector<int64_t>(t.data_as<int64_t>() + i * len, t.data_as<int64_t>() + (i + 1) * len);
}

TEST(TextPreprocessorTest, PadsToTheLongestAndTruncates) {
  auto pre = TextPreprocessor::Create(TextModel(), FixtureDir());
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  auto out = (*pre)->Run({"the quick", "the quick brown fox over the quick brown fox"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].name, "input_ids");
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{2, 8}));
  // [CLS]=2 the=5 quick=6 [SEP]=3, [PAD]=0
  EXPECT_EQ(Row((*out)[0].tensor, 0), (std::vector<int64_t>{2, 5, 6, 3, 0, 0, 0, 0}));
  EXPECT_EQ(Row((*out)[0].tensor, 1), (std::vector<int64_t>{2, 5, 6, 7, 8, 9, 5, 3}));
  EXPECT_EQ(Row((*out)[1].tensor, 0), (std::vector<int64_t>{1, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Row((*out)[1].tensor, 1), (std::vector<int64_t>(8, 1)));
  EXPECT_EQ(Row((*out)[2].tensor, 1), (std::vector<int64_t>(8, 0)));

  auto one = (*pre)->Run({"hello"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].tensor.shape(), (Shape{1, 3}));  // only as long as needed
}

TEST(TextPreprocessorTest, FixedLengthAndInt32) {
  auto c = TextModel(6);
  for (auto& in : c.inputs) in.dtype = DataType::kInt32;
  auto pre = TextPreprocessor::Create(c, FixtureDir());
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  auto out = (*pre)->Run({"hello world and more words than fit"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{1, 6}));
  EXPECT_EQ((*out)[0].tensor.dtype(), DataType::kInt32);
  EXPECT_EQ((*out)[0].tensor.data_as<int32_t>()[5], 3);  // [SEP] last after truncation
}

TEST(TextPreprocessorTest, TruncationOffRefusesLongText) {
  auto c = TextModel();
  c.preprocess.truncation = false;
  auto pre = TextPreprocessor::Create(c, FixtureDir());
  ASSERT_TRUE(pre.ok());
  EXPECT_TRUE((*pre)->Run({"the quick"}).ok());
  auto out = (*pre)->Run({"the quick brown fox over the quick brown fox"});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("max_length 8"), std::string::npos)
      << out.status().message();
  EXPECT_EQ((*pre)->Run({std::string(kMaxTextBytes + 1, 'a')}).status().code(),
            StatusCode::kPayloadTooLarge);
}

TEST(TextPreprocessorTest, ConfigErrors) {
  auto c = TextModel();
  c.preprocess.vocab = "missing_vocab.txt";
  EXPECT_EQ(TextPreprocessor::Create(c, FixtureDir()).status().code(),
            StatusCode::kFailedPrecondition);
  c = TextModel();
  c.inputs[0].name = "tokens";
  EXPECT_FALSE(TextPreprocessor::Create(c, FixtureDir()).ok());
  c = TextModel();
  c.inputs[1].dtype = DataType::kFp32;
  EXPECT_FALSE(TextPreprocessor::Create(c, FixtureDir()).ok());
}

TEST(TextPreprocessorTest, HookTakesPlainTextAndJson) {
  auto hooks = MakeModelHooks(TextModel(), FixtureDir());
  ASSERT_TRUE(hooks.ok()) << hooks.status().ToString();
  scheduler::InferenceRequest request;
  request.raw.push_back({"text/plain; charset=utf-8", "the quick"});
  request.raw.push_back({"application/json", R"({"text": "the quick"})"});
  ASSERT_TRUE(hooks->preprocess(request).ok());
  ASSERT_EQ(request.inputs.size(), 3u);
  EXPECT_EQ(Row(request.inputs[0].tensor, 0), Row(request.inputs[0].tensor, 1));

  scheduler::InferenceRequest bad;
  bad.raw.push_back({"image/png", "the quick"});
  EXPECT_EQ(hooks->preprocess(bad).code(), StatusCode::kInvalidArgument);
  scheduler::InferenceRequest latin1;
  latin1.raw.push_back({"text/plain; charset=iso-8859-1", "caf\xE9"});
  EXPECT_EQ(hooks->preprocess(latin1).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inferd::pipeline
