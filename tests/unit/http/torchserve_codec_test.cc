#include "http/torchserve_codec.h"

#include <gtest/gtest.h>

#include "http/json_body.h"

namespace inferd::http {
namespace {

config::ModelConfig OneInput() {
  config::ModelConfig c;
  c.name = "digits";
  c.max_batch_size = 8;
  c.inputs = {{"x", DataType::kFp32, {2, 3}, std::nullopt}};
  c.outputs = {{"logits", DataType::kFp32, {2}, std::nullopt}};
  return c;
}

config::ModelConfig TwoInputs() {
  config::ModelConfig c;
  c.name = "two";
  c.inputs = {{"a", DataType::kFp32, {2}, std::nullopt}, {"b", DataType::kInt64, {}, std::nullopt}};
  return c;
}

StatusOr<PredictionRequest> Parse(std::string body, const config::ModelConfig& c) {
  ReservePadding(body);
  return ParsePredictionJson(body, c);
}

TEST(PredictionParse, SingleItemGetsABatchDim) {
  auto r = Parse("[[1,2,3],[4,5,6]]", OneInput());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->added_batch_dim);
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].name, "x");
  EXPECT_EQ(r->inputs[0].tensor.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(r->inputs[0].tensor.dtype(), DataType::kFp32);
}

TEST(PredictionParse, BatchIsTakenAsIs) {
  auto r = Parse("[[[1,2,3],[4,5,6]],[[1,2,3],[4,5,6]]]", OneInput());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->added_batch_dim);
  EXPECT_EQ(r->inputs[0].tensor.shape(), (Shape{2, 2, 3}));
}

TEST(PredictionParse, ObjectFormAndDataAlias) {
  auto r = Parse(R"({"data":[[1,2,3],[4,5,6]]})", OneInput());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto two = Parse(R"({"b":5,"a":[1.5,2]})", TwoInputs());
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_TRUE(two->added_batch_dim);
  ASSERT_EQ(two->inputs.size(), 2u);
  EXPECT_EQ(two->inputs[0].name, "b");
  EXPECT_EQ(two->inputs[0].tensor.dtype(), DataType::kInt64);
  EXPECT_EQ(two->inputs[0].tensor.shape(), (Shape{1}));
  EXPECT_EQ(two->inputs[1].tensor.shape(), (Shape{1, 2}));
}

TEST(PredictionParse, Errors) {
  EXPECT_EQ(Parse("[[1,2,3],[4,5]]", OneInput()).status().message(),
            "input 'x': ragged nested list: a list at depth 1 has 2 elements, expected 3 like "
            "the first one");
  EXPECT_EQ(Parse("[1,2,3]", OneInput()).status().message(),
            "input 'x': expected rank 2 (one item of shape [2,3]) or rank 3 (a batch of them), "
            "got shape [3]");
  EXPECT_EQ(Parse(R"({"a":[1,2]})", TwoInputs()).status().message(),
            "missing input 'b'; model 'two' has inputs: a, b");
  EXPECT_EQ(Parse(R"({"a":[1,2],"b":1,"c":2})", TwoInputs()).status().message(),
            "unknown input 'c'; model 'two' has inputs: a, b");
  EXPECT_EQ(Parse("[1,2]", TwoInputs()).status().message(),
            "model 'two' has 2 inputs: send an object of input name -> nested list (a, b)");
  EXPECT_NE(Parse(R"({"a":[[1,2]],"b":1})", TwoInputs())
                .status()
                .message()
                .find("some inputs come with the batch dim and some without"),
            std::string::npos);
  std::string bad = Parse("not json", OneInput()).status().message();
  EXPECT_EQ(bad.rfind("malformed JSON in request body", 0), 0u) << bad;
  EXPECT_NE(bad.find("need a preprocess: section"), std::string::npos);
  EXPECT_NE(Parse(R"({"b":1.5,"a":[1,2]})", TwoInputs())
                .status()
                .message()
                .find("input 'b': element 0: expected an integer"),
            std::string::npos);
}

scheduler::InferenceResponse Outputs(int batch) {
  scheduler::InferenceResponse resp;
  Tensor t = Tensor::Allocate(DataType::kFp32, {batch, 2});
  for (int i = 0; i < 2 * batch; ++i) t.mutable_data_as<float>()[i] = 0.5f * static_cast<float>(i);
  resp.outputs = {{"logits", t}};
  return resp;
}

TEST(PredictionResponse, SingleOutputIsANestedList) {
  EXPECT_EQ(*WritePredictionResponse(Outputs(1), true), "[0,0.5]");
  EXPECT_EQ(*WritePredictionResponse(Outputs(2), false), "[[0,0.5],[1,1.5]]");
  EXPECT_EQ(*WritePredictionResponse(Outputs(1), false), "[[0,0.5]]");
}

TEST(PredictionResponse, SeveralOutputsAreAnObject) {
  auto resp = Outputs(1);
  Tensor n = Tensor::Allocate(DataType::kInt64, {1});
  n.mutable_data_as<int64_t>()[0] = 3;
  resp.outputs.push_back({"n", n});
  EXPECT_EQ(*WritePredictionResponse(resp, true), R"({"logits":[0,0.5],"n":3})");
}

TEST(PredictionResponse, LabelsInTorchServesClassifierShape) {
  scheduler::InferenceResponse resp;
  resp.labels = {{{"tabby", 0.5f}, {"tiger \"cat\"", 0.25f}}};
  EXPECT_EQ(*WritePredictionResponse(resp, true), R"({"tabby":0.5,"tiger \"cat\"":0.25})");
  resp.labels.push_back({{"dog", 1.0f}});
  EXPECT_EQ(*WritePredictionResponse(resp, false),
            R"([{"tabby":0.5,"tiger \"cat\"":0.25},{"dog":1}])");
}

}  // namespace
}  // namespace inferd::http
