#include "scheduler/request_validation.h"

#include <gtest/gtest.h>

#include <cstring>

#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;

config::ModelConfig TwoInputs() {
  auto c = Config(4);
  c.inputs.push_back({"ids", DataType::kInt64, {-1}, std::nullopt});
  return c;
}

void ExpectInvalid(const config::ModelConfig& c, InferenceRequest r, const std::string& fragment) {
  auto v = ValidateRequest(c, false, &r);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find(fragment), std::string::npos) << v.status().message();
}

TEST(RequestValidationTest, ReordersInputsAndCountsItems) {
  InferenceRequest r;
  r.inputs = {{"ids", Tensor::Allocate(DataType::kInt64, {3, 7})}, {"x", FloatTensor({3, 2})}};
  auto v = ValidateRequest(TwoInputs(), false, &r);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 3);
  EXPECT_EQ(r.inputs[0].name, "x");
  EXPECT_EQ(r.inputs[1].name, "ids");
}

TEST(RequestValidationTest, NamesTheInputAndWhatWasExpected) {
  auto c = TwoInputs();
  InferenceRequest missing;
  missing.inputs = {{"x", FloatTensor({1, 2})}};
  ExpectInvalid(c, missing, "missing input 'ids'");

  InferenceRequest extra;
  extra.inputs = {{"x", FloatTensor({1, 2})}, {"ids", Tensor::Allocate(DataType::kInt64, {1, 1})},
                  {"z", FloatTensor({1})}};
  ExpectInvalid(c, extra, "unexpected input 'z'");

  InferenceRequest dtype;
  dtype.inputs = {{"x", FloatTensor({1, 2})}, {"ids", FloatTensor({1, 1})}};
  ExpectInvalid(c, dtype, "input 'ids': expected datatype INT64, got FP32");

  InferenceRequest shape;
  shape.inputs = {{"x", FloatTensor({1, 3})}, {"ids", Tensor::Allocate(DataType::kInt64, {1, 1})}};
  ExpectInvalid(c, shape, "input 'x': expected shape [-1,2]");

  InferenceRequest too_big;
  too_big.inputs = {{"x", FloatTensor({5, 2})}, {"ids", Tensor::Allocate(DataType::kInt64, {5, 1})}};
  ExpectInvalid(c, too_big, "batch of 1..4");

  InferenceRequest mismatch;
  mismatch.inputs = {{"x", FloatTensor({2, 2})}, {"ids", Tensor::Allocate(DataType::kInt64, {1, 1})}};
  ExpectInvalid(c, mismatch, "batch size 1 differs");

  InferenceRequest short_data;
  auto owner = std::make_shared<std::vector<float>>(3);
  short_data.inputs = {{"x", Tensor::Borrow(DataType::kFp32, {1, 2}, owner, owner->data(), 12)},
                       {"ids", Tensor::Allocate(DataType::kInt64, {1, 1})}};
  ExpectInvalid(c, short_data, "needs 8 bytes of FP32, got 12");
}

TEST(RequestValidationTest, RawPayloadNeedsAPreprocessor) {
  InferenceRequest r;
  r.raw.push_back({"image/jpeg", "abc"});
  ExpectInvalid(Config(4), r, "has no `preprocess`");
  auto c = Config(4);
  c.preprocess.kind = config::PreprocessKind::kImage;
  InferenceRequest ok;
  ok.raw.push_back({"image/jpeg", "abc"});
  auto v = ValidateRequest(c, true, &ok);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 1);
}

TEST(RequestValidationTest, BytesTensorElementsMustAddUp) {
  std::vector<std::byte> bytes(4 + 3);
  uint32_t len = 3;
  std::memcpy(bytes.data(), &len, 4);
  Tensor good = Tensor::FromBytes(DataType::kBytes, {1}, bytes);
  EXPECT_TRUE(ValidateBytesTensor("img", good).ok());
  len = 9;
  std::memcpy(bytes.data(), &len, 4);
  Tensor bad = Tensor::FromBytes(DataType::kBytes, {1}, bytes);
  Status st = ValidateBytesTensor("img", bad);
  EXPECT_NE(st.message().find("claims 9 bytes"), std::string::npos) << st.message();
  Tensor count = Tensor::FromBytes(DataType::kBytes, {2}, std::vector<std::byte>{});
  EXPECT_FALSE(ValidateBytesTensor("img", count).ok());
}

}  // namespace
}  // namespace inferd::scheduler
