// The rule precision auto serves by (backend/runtime_choice.h): measured
// candidates in, the one served and a verdict for each out.
#include "backend/runtime_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

CandidateTiming Kept(const std::string& label, double ms_per_item, double ms_alone) {
  return {label, true, "", ms_per_item, ms_alone};
}

CandidateTiming Refused(const std::string& label) { return {label, false, "", 0, 0}; }

// The held-out ResNet-50 of issue 37: bf16 1.59x fp32 per item in a batch,
// 1.05x alone. The old rule (5% on both) served fp32; the served sizes' mean
// says bf16.
TEST(ChooseRuntime, ABatchedGainWithAnAloneTieIsServed) {
  const RuntimeChoice c = ChooseRuntime(
      {Kept("torchscript fp32", 86.5, 91.0), Kept("torchscript bf16", 54.4, 86.7)}, 8);
  EXPECT_EQ(c.chosen, 1u);
  EXPECT_DOUBLE_EQ(c.ms_served[0], (86.5 + 91.0) / 2);
  EXPECT_DOUBLE_EQ(c.ms_served[1], (54.4 + 86.7) / 2);
  EXPECT_EQ(c.verdicts[0], "the reference");
  EXPECT_EQ(c.verdicts[1],
            "chosen: 1.26x torchscript fp32's speed on the served sizes (1.59x per item at batch "
            "8, 1.05x alone)");
}

TEST(ChooseRuntime, TheFastestEligibleCandidateOfAnyRuntimeWins) {
  const RuntimeChoice c =
      ChooseRuntime({Kept("torchscript fp32", 10, 12), Kept("torchscript bf16", 8, 11),
                     Kept("onnxruntime fp32", 5, 6), Kept("onnxruntime int8", 3, 4)},
                    8);
  EXPECT_EQ(c.chosen, 3u);
  EXPECT_THAT(c.verdicts[3], StartsWith("chosen: 3.14x torchscript fp32's speed"));
  EXPECT_THAT(c.verdicts[1], StartsWith("accepted, not chosen: 1.16x"));
  EXPECT_THAT(c.verdicts[2], StartsWith("accepted, not chosen: 2.00x"));
}

// Torch int8 with this libtorch: fastest at load, never served by auto.
TEST(ChooseRuntime, ACandidateAutoMayNotServeIsShownNotChosen) {
  CandidateTiming int8 = Kept("torchscript int8", 2, 3);
  int8.not_servable = "auto does not serve int8 with this libtorch";
  const RuntimeChoice c =
      ChooseRuntime({Kept("torchscript fp32", 10, 10), int8, Kept("onnxruntime fp32", 6, 6)}, 4);
  EXPECT_EQ(c.chosen, 2u);
  EXPECT_THAT(c.verdicts[1], StartsWith("accepted, not chosen: 4.00x"));
  EXPECT_THAT(c.verdicts[1], HasSubstr("; auto does not serve int8 with this libtorch"));
}

// 1.46x per item in a batch but 0.60x alone (libtorch's int8 on real texts):
// a lone request must not pay for the batch's gain.
TEST(ChooseRuntime, ABatchGainBoughtWithALoneRequestsLatencyIsNotServed) {
  const RuntimeChoice c = ChooseRuntime(
      {Kept("torchscript fp32", 4.05, 7.14), Kept("onnxruntime int8", 2.77, 11.9)}, 8);
  EXPECT_EQ(c.chosen, 0u);
  EXPECT_THAT(c.verdicts[0], StartsWith("chosen: no eligible candidate saves 5%"));
  EXPECT_THAT(c.verdicts[1], HasSubstr("0.60x alone"));
  EXPECT_THAT(c.verdicts[1], HasSubstr("alone it is more than 5% slower than torchscript fp32"));
  // And the other way round: faster alone, more than 5% slower batched.
  const RuntimeChoice d =
      ChooseRuntime({Kept("torchscript fp32", 4.0, 8.0), Kept("onnxruntime fp32", 4.4, 2.0)}, 8);
  EXPECT_EQ(d.chosen, 0u);
  EXPECT_THAT(d.verdicts[1], HasSubstr("at batch 8 it is more than 5% slower per item"));
}

TEST(ChooseRuntime, LessThanFivePercentIsNoise) {
  const RuntimeChoice c =
      ChooseRuntime({Kept("torchscript fp32", 10, 10), Kept("onnxruntime fp32", 9.7, 9.7)}, 8);
  EXPECT_EQ(c.chosen, 0u);
  EXPECT_THAT(c.verdicts[1], StartsWith("accepted, not chosen: 1.03x"));
}

TEST(ChooseRuntime, RefusedCandidatesAreNeitherCostedNorGivenAVerdict) {
  const RuntimeChoice c =
      ChooseRuntime({Kept("torchscript fp32", 10, 10), Refused("torchscript bf16"),
                     Kept("onnxruntime fp32", 5, 5)},
                    8);
  EXPECT_EQ(c.chosen, 2u);
  EXPECT_EQ(c.ms_served[1], 0);
  EXPECT_EQ(c.verdicts[1], "");  // the guard's "refused: ..." stands
}

// A model that does not batch is served alone: only ms_alone counts.
TEST(ChooseRuntime, AModelThatDoesNotBatchIsJudgedAlone) {
  const RuntimeChoice c =
      ChooseRuntime({Kept("torchscript fp32", 10, 10), Kept("torchscript bf16", 5, 9.8)}, 1);
  EXPECT_EQ(c.chosen, 0u);
  EXPECT_DOUBLE_EQ(c.ms_served[1], 9.8);
  EXPECT_THAT(c.verdicts[1], HasSubstr("(alone: the model does not batch)"));
}

TEST(ServedBatch, CalibrationThenPreferredSizesThenTheMaximum) {
  config::ModelConfig config;
  config.max_batch_size = 16;
  EXPECT_EQ(ServedBatch(config, 0), 16);
  config.dynamic_batching.preferred_batch_sizes = {4, 8};
  EXPECT_EQ(ServedBatch(config, 0), 8);
  EXPECT_EQ(ServedBatch(config, 2), 2);    // what the queue formed last time
  EXPECT_EQ(ServedBatch(config, 64), 16);  // never above max_batch_size
  config.max_batch_size = 1;
  config.dynamic_batching.preferred_batch_sizes.clear();
  EXPECT_EQ(ServedBatch(config, 0), 1);
}

}  // namespace
}  // namespace inferd::backend
