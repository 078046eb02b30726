#include "pipeline/postprocessor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace inferd::pipeline {
namespace {

Tensor Floats(Shape shape, std::vector<float> v) {
  std::vector<std::byte> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return Tensor::FromBytes(DataType::kFp32, std::move(shape), std::move(bytes));
}

config::ModelConfig Config(const std::string& kind, int classes) {
  auto parsed = config::ParseChoice<config::PostprocessKind>(kind);
  EXPECT_TRUE(parsed.has_value()) << kind;
  config::ModelConfig c;
  c.name = "m";
  c.outputs.push_back({"logits", DataType::kFp32, {classes}, std::nullopt});
  c.postprocess.kind = parsed.value_or(config::PostprocessKind::kRaw);
  return c;
}

class PostprocessorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/postprocessor_test";
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/labels.txt") << "cat\r\ndog\nbird\nfish\n\n";
  }
  std::string dir_;
};

TEST_F(PostprocessorTest, TopkSoftmaxesAndOrders) {
  auto c = Config("topk", 4);
  c.postprocess.k = 3;
  c.postprocess.labels = "labels.txt";
  auto p = Postprocessor::Create(c, dir_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->labels().size(), 4u);
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Floats({2, 4}, {1, 3, 2, 0, 5, 5, -1, 6})});
  ASSERT_TRUE((*p)->Run(&r).ok());
  ASSERT_EQ(r.labels.size(), 2u);
  ASSERT_EQ(r.labels[0].size(), 3u);
  EXPECT_EQ(r.labels[0][0].label, "dog");
  EXPECT_EQ(r.labels[0][1].label, "bird");
  EXPECT_EQ(r.labels[0][2].label, "cat");
  double z = std::exp(1) + std::exp(3) + std::exp(2) + std::exp(0);
  EXPECT_NEAR(r.labels[0][0].score, std::exp(3) / z, 1e-6);
  EXPECT_NEAR(r.labels[0][2].score, std::exp(1) / z, 1e-6);
  // Ties keep the lower index first.
  EXPECT_EQ(r.labels[1][0].label, "fish");
  EXPECT_EQ(r.labels[1][1].label, "cat");
  EXPECT_EQ(r.labels[1][2].label, "dog");
}

TEST_F(PostprocessorTest, TopkWithoutSoftmaxAndWithoutLabels) {
  auto c = Config("topk", 4);
  c.postprocess.k = 10;  // more than the classes: all of them
  c.postprocess.apply_softmax = false;
  auto p = Postprocessor::Create(c, dir_);
  ASSERT_TRUE(p.ok());
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Floats({1, 4}, {1, 3, 2, 0})});
  ASSERT_TRUE((*p)->Run(&r).ok());
  ASSERT_EQ(r.labels[0].size(), 4u);
  EXPECT_EQ(r.labels[0][0].label, "1");
  EXPECT_FLOAT_EQ(r.labels[0][0].score, 3);
  EXPECT_EQ(r.labels[0][3].label, "3");
}

TEST_F(PostprocessorTest, SoftmaxRewritesTheOutput) {
  auto p = Postprocessor::Create(Config("softmax", 3), dir_);
  ASSERT_TRUE(p.ok());
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Floats({2, 3}, {1000, 1001, 1002, -5, 0, 5})});
  ASSERT_TRUE((*p)->Run(&r).ok());
  EXPECT_TRUE(r.labels.empty());
  const float* x = r.outputs[0].tensor.data_as<float>();
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(x[3 * i] + x[3 * i + 1] + x[3 * i + 2], 1.0, 1e-6);
    EXPECT_LT(x[3 * i], x[3 * i + 2]);
  }
  EXPECT_FALSE(std::isnan(x[0]));
}

TEST_F(PostprocessorTest, ArgmaxAndSigmoid) {
  auto c = Config("argmax", 4);
  c.postprocess.labels = "labels.txt";
  auto p = Postprocessor::Create(c, dir_);
  ASSERT_TRUE(p.ok());
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Floats({1, 4}, {0, 0, 9, 0})});
  ASSERT_TRUE((*p)->Run(&r).ok());
  ASSERT_EQ(r.labels[0].size(), 1u);
  EXPECT_EQ(r.labels[0][0].label, "bird");

  c = Config("sigmoid", 4);
  c.postprocess.labels = "labels.txt";
  c.postprocess.threshold = 0.5f;
  p = Postprocessor::Create(c, dir_);
  ASSERT_TRUE(p.ok());
  r = {};
  r.outputs.push_back({"logits", Floats({1, 4}, {2, -1, 0.5f, -3})});
  ASSERT_TRUE((*p)->Run(&r).ok());
  ASSERT_EQ(r.labels[0].size(), 2u);
  EXPECT_EQ(r.labels[0][0].label, "cat");
  EXPECT_NEAR(r.labels[0][0].score, 1 / (1 + std::exp(-2.0)), 1e-6);
  EXPECT_EQ(r.labels[0][1].label, "bird");
}

TEST_F(PostprocessorTest, Bf16Output) {
  auto p = Postprocessor::Create(Config("argmax", 3), dir_);
  ASSERT_TRUE(p.ok());
  std::vector<std::byte> bytes(6);
  const uint16_t v[3] = {0x3F80, 0x4040, 0x4000};  // 1, 3, 2
  std::memcpy(bytes.data(), v, 6);
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Tensor::FromBytes(DataType::kBf16, {1, 3}, bytes)});
  ASSERT_TRUE((*p)->Run(&r).ok());
  EXPECT_EQ(r.labels[0][0].label, "1");
}

TEST_F(PostprocessorTest, LabelsFileErrorsAtCreation) {
  auto c = Config("topk", 4);
  c.postprocess.labels = "missing.txt";
  auto p = Postprocessor::Create(c, dir_);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("missing.txt"), std::string::npos);
  c = Config("topk", 1000);
  c.postprocess.labels = "labels.txt";
  p = Postprocessor::Create(c, dir_);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("4 labels"), std::string::npos) << p.status().message();
  EXPECT_FALSE(Postprocessor::Create(Config("raw", 4), dir_).ok());
}

TEST_F(PostprocessorTest, RuntimeMismatchIsAnError) {
  auto c = Config("topk", -1);
  c.postprocess.labels = "labels.txt";
  auto p = Postprocessor::Create(c, dir_);
  ASSERT_TRUE(p.ok());
  scheduler::InferenceResponse r;
  r.outputs.push_back({"logits", Floats({1, 3}, {1, 2, 3})});
  EXPECT_EQ((*p)->Run(&r).code(), StatusCode::kInternal);
  r.outputs.clear();
  EXPECT_FALSE((*p)->Run(&r).ok());
}

}  // namespace
}  // namespace inferd::pipeline
