#include "optimize/comparison_samples.h"

#include <gtest/gtest.h>

namespace inferd::optimize {
namespace {

TEST(ComparisonSamples, DrawnItemsAloneThenInBatches) {
  config::ModelConfig c;
  c.name = "m";
  c.max_batch_size = 3;
  c.inputs = {{"x", DataType::kFp32, {2, -1}, std::nullopt},
              {"ids", DataType::kInt64, {}, std::nullopt}};
  auto s = MakeComparisonSamples(c, "/nonexistent", 4);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->samples, 4);
  EXPECT_EQ(s->source, "drawn for the declared shapes");
  // 4 alone, then a batch of 3 (max_batch_size) and no batch of the single one left.
  ASSERT_EQ(s->runs.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(s->runs[i].alone);
    EXPECT_EQ(s->runs[i].inputs[0].tensor.shape(), (Shape{1, 2, 8}));
    EXPECT_EQ(s->runs[i].inputs[1].tensor.shape(), (Shape{1}));
    EXPECT_EQ(s->runs[i].inputs[1].tensor.data_as<int64_t>()[0], 1);
  }
  EXPECT_FALSE(s->runs[4].alone);
  EXPECT_EQ(s->runs[4].items, 3);
  EXPECT_EQ(s->runs[4].inputs[0].tensor.shape(), (Shape{3, 2, 8}));
  // The batch holds the items as they ran alone.
  const float* batch = s->runs[4].inputs[0].tensor.data_as<float>();
  const float* second = s->runs[1].inputs[0].tensor.data_as<float>();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(batch[16 + i], second[i]);
  // Seeded: the same inputs every time.
  auto again = MakeComparisonSamples(c, "/nonexistent", 4);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->runs[0].inputs[0].tensor.data_as<float>()[0],
            s->runs[0].inputs[0].tensor.data_as<float>()[0]);
}

TEST(ComparisonSamples, ImagesWithoutSamplesAreNormalizedPixels) {
  config::ModelConfig c;
  c.name = "img";
  c.max_batch_size = 1;
  c.inputs = {{"input", DataType::kFp32, {3, 4, 4}, std::nullopt}};
  c.preprocess.kind = config::PreprocessKind::kImage;
  c.preprocess.mean = {0.5f, 0.5f, 0.5f};
  c.preprocess.std = {0.25f, 0.25f, 0.25f};
  auto s = MakeComparisonSamples(c, "/nonexistent", 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->runs.size(), 2u);  // max_batch_size 1: no batch
  const Tensor& t = s->runs[0].inputs[0].tensor;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_GE(t.data_as<float>()[i], -2.0f);  // (0 - 0.5) / 0.25
    EXPECT_LE(t.data_as<float>()[i], 2.0f);   // (1 - 0.5) / 0.25
  }
}

TEST(ComparisonSamples, BytesInputsCannotBeDrawn) {
  config::ModelConfig c;
  c.name = "m";
  c.inputs = {{"text", DataType::kBytes, {1}, std::nullopt}};
  auto s = MakeComparisonSamples(c, "/nonexistent");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'text' is BYTES"), std::string::npos);
}

}  // namespace
}  // namespace inferd::optimize
