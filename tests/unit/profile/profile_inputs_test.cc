#include "profile/profile_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::profile {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

config::ModelConfig Config(const std::string& yaml) {
  auto c = config::ParseModelConfig(yaml, "config.yaml", "m");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

TEST(ProfileInputsTest, OneRequestOfTheConfiguredShapeWithTheBatchDimFirst) {
  auto c = Config(
      "max_batch_size: 8\n"
      "inputs: [{name: image, datatype: FP32, shape: [3, 4, 4]},"
      " {name: ids, datatype: INT64, shape: [-1]}]\n");
  auto in = MakeProfileInputs(c, 7);
  ASSERT_TRUE(in.ok()) << in.status().message();
  ASSERT_EQ(in->size(), 2u);
  EXPECT_EQ((*in)[0].name, "image");
  EXPECT_THAT((*in)[0].tensor.shape(), ElementsAre(1, 3, 4, 4));
  EXPECT_THAT((*in)[1].tensor.shape(), ElementsAre(1, 7));
  const float* f = (*in)[0].tensor.data_as<float>();
  bool nonzero = false;
  for (int i = 0; i < 48; ++i) {
    EXPECT_GE(f[i], -1.0f);
    EXPECT_LT(f[i], 1.0f);
    nonzero = nonzero || f[i] != 0;
  }
  EXPECT_TRUE(nonzero);
  for (int i = 0; i < 7; ++i) EXPECT_EQ((*in)[1].tensor.data_as<int64_t>()[i], 1);
}

TEST(ProfileInputsTest, VariableDimsDefaultToTheTokenizersMaxLength) {
  auto text = Config(
      "inputs: [{name: ids, datatype: INT64, shape: [-1]}]\n"
      "preprocess: {kind: text, tokenizer: wordpiece, vocab: vocab.txt, max_length: 64}\n");
  EXPECT_EQ(DefaultVariableDim(text), 64);
  EXPECT_EQ(DefaultVariableDim(Config("inputs: [{name: x, datatype: FP32, shape: [-1]}]\n")), 1);
}

TEST(ProfileInputsTest, RefusesBytesInputsAndNoInputs) {
  auto bytes = MakeProfileInputs(Config("inputs: [{name: s, datatype: BYTES, shape: [1]}]\n"), 1);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("model 'm': input 's' is BYTES"));
  config::ModelConfig no_inputs;
  no_inputs.name = "m";
  auto none = MakeProfileInputs(no_inputs, 1);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("lists no inputs"));
}

}  // namespace
}  // namespace inferd::profile
