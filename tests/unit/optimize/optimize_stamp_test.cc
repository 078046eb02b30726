#include "optimize/optimize_stamp.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::optimize {
namespace {

TEST(OptimizeStamp, Sha256OfAFile) {
  const auto path =
      std::filesystem::temp_directory_path() / ("inferd_stamp_test_" + std::to_string(::getpid()));
  std::ofstream(path) << "abc";
  auto digest = Sha256File(path.string());
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(path);
  auto missing = Sha256File(path.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path.string()), std::string::npos);
}

config::ModelConfig Text() {
  config::ModelConfig c;
  c.name = "bert";
  c.inputs = {{"input_ids", DataType::kInt64, {-1}, 0.0},
              {"attention_mask", DataType::kInt64, {-1}, 0.0}};
  c.outputs = {{"logits", DataType::kFp32, {4}, std::nullopt}};
  c.preprocess.kind = config::PreprocessKind::kText;
  return c;
}

TEST(OptimizeStamp, NamesTheTensorsAndWhatTheCandidatesCameFrom) {
  config::ModelConfig c = Text();
  EXPECT_EQ(TensorSignature(c),
            "input_ids:INT64[-1] attention_mask:INT64[-1] -> logits:FP32[4] preprocess:text");
  const std::string stamp = MakeStamp("aa", "bb", c);
  EXPECT_NE(stamp.find("model.pt sha256 aa"), std::string::npos) << stamp;
  EXPECT_NE(stamp.find("export script sha256 bb"), std::string::npos) << stamp;
  // Batching and precision do not change the candidates; the tensors do.
  config::ModelConfig batched = c;
  batched.max_batch_size = 32;
  batched.precision = config::Precision::kBf16;
  EXPECT_EQ(MakeStamp("aa", "bb", batched), stamp);
  config::ModelConfig renamed = c;
  renamed.outputs[0].name = "scores";
  EXPECT_NE(MakeStamp("aa", "bb", renamed), stamp);
  EXPECT_NE(MakeStamp("ab", "bb", c), stamp);
}

}  // namespace
}  // namespace inferd::optimize
