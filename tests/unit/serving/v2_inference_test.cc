#include "serving/v2_inference.h"

#include <gtest/gtest.h>

#include "serving/bytes_elements.h"

namespace inferd::serving {
namespace {

config::ModelConfig TensorModel() {
  config::ModelConfig c;
  c.name = "m";
  c.inputs = {{"x", DataType::kFp32, {2}, std::nullopt}};
  c.outputs = {{"y", DataType::kFp32, {2}, std::nullopt},
               {"z", DataType::kInt64, {}, std::nullopt}};
  return c;
}

config::ModelConfig ImageModel() {
  config::ModelConfig c = TensorModel();
  c.name = "img";
  c.preprocess.kind = config::PreprocessKind::kImage;
  c.postprocess.kind = config::PostprocessKind::kTopk;
  c.max_batch_size = 2;
  return c;
}

Tensor Bytes(std::vector<std::string> elements) {
  std::vector<std::byte> out;
  for (const auto& e : elements) AppendBytesElement(out, e);
  return Tensor::FromBytes(DataType::kBytes, {static_cast<int64_t>(elements.size())},
                           std::move(out));
}

TEST(MakeInferenceRequest, TensorsGoAsTheyAre) {
  V2InferRequest v2;
  v2.id = "r1";
  v2.priority = 2;
  v2.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  auto r = MakeInferenceRequest(TensorModel(), v2, TimePoint{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->id, "r1");
  EXPECT_EQ(r->priority, 2);
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].tensor.shape(), (Shape{1, 2}));
  EXPECT_TRUE(r->raw.empty());
  EXPECT_EQ(r->deadline, TimePoint::max());  // the scheduler applies the model's timeout
}

TEST(MakeInferenceRequest, TimeoutSetsTheDeadlineFromReceipt) {
  V2InferRequest v2;
  v2.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  v2.timeout_us = 1500;
  TimePoint received = TimePoint{} + std::chrono::seconds(10);
  auto r = MakeInferenceRequest(TensorModel(), v2, received);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deadline, received + std::chrono::microseconds(1500));
}

TEST(MakeInferenceRequest, RawModelsTakeTheBytesElementsAsPayloads) {
  V2InferRequest v2;
  v2.inputs = {{"image", Bytes({"jpeg-1", "jpeg-2"})}};
  auto r = MakeInferenceRequest(ImageModel(), v2, TimePoint{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->inputs.empty());
  ASSERT_EQ(r->raw.size(), 2u);
  EXPECT_EQ(r->raw[1].bytes, "jpeg-2");
}

// Counted before the elements are copied out: a million empty elements cost
// 4 MB of body but would become a million items.
TEST(MakeInferenceRequest, MorePayloadsThanTheBatchSizeAreRefusedBeforeExpanding) {
  V2InferRequest v2;
  v2.inputs = {{"image", Bytes(std::vector<std::string>(3, ""))}};
  auto r = MakeInferenceRequest(ImageModel(), v2, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input 'image' carries 3 payloads, more than max_batch_size 2");
}

TEST(MakeInferenceRequest, RawModelsRefuseTensors) {
  V2InferRequest v2;
  v2.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  auto r = MakeInferenceRequest(ImageModel(), v2, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "model 'img' preprocesses raw data (image): send one BYTES input whose elements are "
            "the raw payloads");
}

TEST(MakeInferenceRequest, UnknownRequestedOutputIsRefusedBeforeCompute) {
  V2InferRequest v2;
  v2.inputs = {{"image", Bytes({"a"})}};
  v2.outputs = {{"labels", false}, {"nope", false}};
  auto r = MakeInferenceRequest(ImageModel(), v2, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "unknown output 'nope'; model 'img' has outputs: labels, scores, y, z");
}

scheduler::InferenceResponse TwoOutputs() {
  scheduler::InferenceResponse resp;
  resp.outputs = {{"y", Tensor::Allocate(DataType::kFp32, {1, 2})},
                  {"z", Tensor::Allocate(DataType::kInt64, {1})}};
  return resp;
}

TEST(SelectV2Outputs, AllByDefaultInTheModelsOrder) {
  V2ResponseContext ctx{"m", 1, "", {}, false};
  auto out = SelectV2Outputs(TwoOutputs(), ctx);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].tensor.name, "y");
  EXPECT_FALSE((*out)[0].binary);
}

TEST(SelectV2Outputs, AsAskedWithBinaryFlags) {
  V2ResponseContext ctx{"m", 1, "", {{"z", true}, {"y", false}}, false};
  auto out = SelectV2Outputs(TwoOutputs(), ctx);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].tensor.name, "z");
  EXPECT_TRUE((*out)[0].binary);
  EXPECT_FALSE((*out)[1].binary);
  ctx.binary_data_output = true;
  EXPECT_TRUE((*SelectV2Outputs(TwoOutputs(), ctx))[1].binary);
}

TEST(SelectV2Outputs, UnknownOutputNamesTheKnownOnes) {
  V2ResponseContext ctx{"m", 1, "", {{"nope", false}}, false};
  auto out = SelectV2Outputs(TwoOutputs(), ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "unknown output 'nope'; model 'm' has outputs: y, z");
}

TEST(V2OutputTensors, LabelsBecomeBytesAndScores) {
  scheduler::InferenceResponse resp;
  resp.labels = {{{"cat", 0.75f}, {"dog", 0.25f}}, {{"cow", 1.0f}}};
  auto tensors = V2OutputTensors(resp);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "labels");
  EXPECT_EQ(tensors[0].tensor.dtype(), DataType::kBytes);
  auto labels = SplitBytesElements(tensors[0].tensor.data(), tensors[0].tensor.byte_size(), 4, "");
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ((*labels)[2], "cow");
  EXPECT_EQ((*labels)[3], "");  // padding
  EXPECT_EQ(tensors[1].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(tensors[1].tensor.data_as<float>()[3], 0.0f);
}

TEST(BytesElements, SplitChecksCountAndFraming) {
  Tensor t = Bytes({"ab", ""});
  auto ok = SplitBytesElements(t.data(), t.byte_size(), 2, "input 'x'");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0], "ab");
  auto count = SplitBytesElements(t.data(), t.byte_size(), 3, "input 'x'");
  EXPECT_EQ(count.status().message(), "input 'x': expected 3 BYTES elements, got 2");
  auto cut = SplitBytesElements(t.data(), t.byte_size() - 1, -1, "input 'x'");
  EXPECT_EQ(cut.status().message(),
            "input 'x': BYTES element 1: truncated 4-byte length prefix at byte 6");
}

}  // namespace
}  // namespace inferd::serving
