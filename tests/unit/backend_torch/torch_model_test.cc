// TorchModel through the Backend interface: datatypes, input/output shapes
// and naming, failures, on the models of the test store.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/torch/torch_model.h"
#include "unit/backend_torch/test_models.h"

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;
using testing::LoadOrDie;
using testing::LoadTestModel;
using testing::MakeTensor;
using testing::TestConfig;
using testing::TestLoadOptions;
using testing::Values;

TEST(TorchModelTest, IdentityReturnsTheInputWithoutCopying) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("identity_fp32");
  ASSERT_NE(model, nullptr);
  Tensor in = MakeTensor<float>(DataType::kFp32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = model->Execute({{"input", in}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "output");
  EXPECT_EQ((*out)[0].tensor.dtype(), DataType::kFp32);
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>((*out)[0].tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // from_blob in, borrowed storage out: the same bytes all the way through.
  EXPECT_EQ((*out)[0].tensor.data(), in.data());
}

TEST(TorchModelTest, VariableDimsChangeFromCallToCall) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("two_io");
  ASSERT_NE(model, nullptr);
  for (int64_t batch : {1, 3, 2}) {
    for (int64_t len : {1, 5}) {
      std::vector<float> a(batch * len * 4);
      std::vector<int64_t> b(batch * len * 2);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int64_t>(i) - 7;
      auto out = model->Execute({{"a", MakeTensor(DataType::kFp32, {batch, len, 4}, a)},
                                 {"b", MakeTensor(DataType::kInt64, {batch, len * 2}, b)}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      ASSERT_EQ(out->size(), 2u);
      EXPECT_EQ((*out)[0].name, "a_doubled");
      EXPECT_EQ((*out)[0].tensor.shape(), (Shape{batch, len, 4}));
      EXPECT_EQ((*out)[1].name, "b_plus_one");
      EXPECT_EQ((*out)[1].tensor.dtype(), DataType::kInt64);
      EXPECT_EQ((*out)[1].tensor.shape(), (Shape{batch, len * 2}));
      std::vector<float> a2 = Values<float>((*out)[0].tensor);
      std::vector<int64_t> b1 = Values<int64_t>((*out)[1].tensor);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a2[i], 2 * a[i]);
      for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b1[i], b[i] + 1);
    }
  }
}

TEST(TorchModelTest, InputsAreMatchedByNameWhenOutOfOrder) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("two_io");
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"b", MakeTensor<int64_t>(DataType::kInt64, {1, 1}, {41})},
                             {"a", MakeTensor<float>(DataType::kFp32, {1, 4}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0].tensor), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(Values<int64_t>((*out)[1].tensor), (std::vector<int64_t>{42}));
}

TEST(TorchModelTest, DictOutputsAreMatchedByName) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("dict_out");
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"x", MakeTensor<float>(DataType::kFp32, {2, 4},
                                                     {1, 2, 3, 4, 10, 20, 30, 40})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "negated");  // config order, not the dict's
  EXPECT_EQ(Values<float>((*out)[0].tensor),
            (std::vector<float>{-1, -2, -3, -4, -10, -20, -30, -40}));
  EXPECT_EQ((*out)[1].name, "sum");
  EXPECT_EQ((*out)[1].tensor.shape(), (Shape{2, 1}));
  EXPECT_EQ(Values<float>((*out)[1].tensor), (std::vector<float>{10, 100}));
}

TEST(TorchModelTest, OutputsWithoutConfigAreNamedByPositionOrDictKey) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions tuple = TestLoadOptions("two_io");
  tuple.config.outputs.clear();
  auto model = LoadOrDie(tuple);
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"a", MakeTensor<float>(DataType::kFp32, {1, 4}, {1, 1, 1, 1})},
                             {"b", MakeTensor<int64_t>(DataType::kInt64, {1, 1}, {1})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "output0");
  EXPECT_EQ((*out)[1].name, "output1");

  LoadOptions dict = TestLoadOptions("dict_out");
  dict.config.outputs.clear();
  model = LoadOrDie(dict);
  ASSERT_NE(model, nullptr);
  out = model->Execute({{"x", MakeTensor<float>(DataType::kFp32, {1, 4}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "sum");  // the dict's insertion order
  EXPECT_EQ((*out)[1].name, "negated");
}

TEST(TorchModelTest, EveryDatatypeRoundTrips) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("all_dtypes");
  ASSERT_NE(model, nullptr);
  // FP16 1.5 = 0x3E00 -> 2.5 = 0x4100; BF16 1.5 = 0x3FC0 -> 2.5 = 0x4020.
  std::vector<NamedTensor> in = {
      {"in_bool", MakeTensor<uint8_t>(DataType::kBool, {1, 3}, {1, 0, 1})},
      {"in_uint8", MakeTensor<uint8_t>(DataType::kUint8, {1, 3}, {0, 7, 255})},
      {"in_int8", MakeTensor<int8_t>(DataType::kInt8, {1, 3}, {-128, -1, 126})},
      {"in_int16", MakeTensor<int16_t>(DataType::kInt16, {1, 3}, {-300, 0, 30000})},
      {"in_int32", MakeTensor<int32_t>(DataType::kInt32, {1, 3}, {-70000, 0, 2000000000})},
      {"in_int64", MakeTensor<int64_t>(DataType::kInt64, {1, 3}, {-1, 0, int64_t{1} << 40})},
      {"in_fp16", MakeTensor<uint16_t>(DataType::kFp16, {1, 3}, {0x3E00, 0x3E00, 0x3E00})},
      {"in_bf16", MakeTensor<uint16_t>(DataType::kBf16, {1, 3}, {0x3FC0, 0x3FC0, 0x3FC0})},
      {"in_fp32", MakeTensor<float>(DataType::kFp32, {1, 3}, {-1.5f, 0.f, 1e30f})},
      {"in_fp64", MakeTensor<double>(DataType::kFp64, {1, 3}, {-1.5, 0.25, 1e300})},
  };
  auto out = model->Execute(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*out)[i].name, "out_" + in[i].name.substr(3));
    EXPECT_EQ((*out)[i].tensor.dtype(), in[i].tensor.dtype()) << (*out)[i].name;
    EXPECT_EQ((*out)[i].tensor.shape(), (Shape{1, 3})) << (*out)[i].name;
  }
  const auto& o = *out;
  EXPECT_EQ(Values<uint8_t>(o[0].tensor), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(Values<uint8_t>(o[1].tensor), (std::vector<uint8_t>{1, 8, 0}));
  EXPECT_EQ(Values<int8_t>(o[2].tensor), (std::vector<int8_t>{-127, 0, 127}));
  EXPECT_EQ(Values<int16_t>(o[3].tensor), (std::vector<int16_t>{-299, 1, 30001}));
  EXPECT_EQ(Values<int32_t>(o[4].tensor), (std::vector<int32_t>{-69999, 1, 2000000001}));
  EXPECT_EQ(Values<int64_t>(o[5].tensor), (std::vector<int64_t>{0, 1, (int64_t{1} << 40) + 1}));
  EXPECT_EQ(Values<uint16_t>(o[6].tensor), (std::vector<uint16_t>{0x4100, 0x4100, 0x4100}));
  EXPECT_EQ(Values<uint16_t>(o[7].tensor), (std::vector<uint16_t>{0x4020, 0x4020, 0x4020}));
  EXPECT_EQ(Values<float>(o[8].tensor), (std::vector<float>{-0.5f, 1.f, 1e30f + 1}));
  EXPECT_EQ(Values<double>(o[9].tensor), (std::vector<double>{-0.5, 1.25, 1e300}));
}

TEST(TorchModelTest, MisalignedInputBytesAreAccepted) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("two_io");
  ASSERT_NE(model, nullptr);
  // An INT64 tensor at an odd offset, as a binary request body can hold it.
  auto body = std::make_shared<std::vector<std::byte>>(1 + 2 * sizeof(int64_t));
  const int64_t b[2] = {5, 6};
  std::memcpy(body->data() + 1, b, sizeof(b));
  Tensor misaligned = Tensor::Borrow(DataType::kInt64, {1, 2}, body, body->data() + 1, sizeof(b));
  auto out = model->Execute({{"a", MakeTensor<float>(DataType::kFp32, {1, 4}, {0, 0, 0, 0})},
                             {"b", misaligned}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<int64_t>((*out)[1].tensor), (std::vector<int64_t>{6, 7}));
}

TEST(TorchModelTest, ModuleThatCannotBeFrozenIsServedUnfrozen) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("unfreezable");
  ASSERT_NE(model, nullptr);
  auto* torch_model = dynamic_cast<TorchModel*>(model.get());
  ASSERT_NE(torch_model, nullptr);
  EXPECT_FALSE(torch_model->frozen());
  EXPECT_TRUE(dynamic_cast<TorchModel*>(LoadTestModel("tiny_cnn").get())->frozen());
  auto out = model->Execute({{"x", MakeTensor<float>(DataType::kFp32, {1, 2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0].tensor), (std::vector<float>{2, 3}));
}

TEST(TorchModelTest, ModelThatThrowsReturnsInternalAndKeepsWorking) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("thrower");
  ASSERT_NE(model, nullptr);
  auto bad = model->Execute({{"x", MakeTensor<float>(DataType::kFp32, {1, 2}, {1, -1})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
  EXPECT_THAT(bad.status().message(), HasSubstr("negative input"));
  EXPECT_THAT(bad.status().message(), HasSubstr("'thrower'"));
  auto good = model->Execute({{"x", MakeTensor<float>(DataType::kFp32, {1, 2}, {1, 2})}});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(Values<float>((*good)[0].tensor), (std::vector<float>{2, 4}));
}

TEST(TorchModelTest, WrongInputsAreInvalidArgument) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("two_io");
  ASSERT_NE(model, nullptr);
  Tensor a = MakeTensor<float>(DataType::kFp32, {1, 4}, {1, 2, 3, 4});
  Tensor b = MakeTensor<int64_t>(DataType::kInt64, {1, 1}, {1});

  auto wrong_count = model->Execute({{"a", a}});
  EXPECT_EQ(wrong_count.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_count.status().message(), HasSubstr("takes 2 inputs, got 1"));

  auto wrong_type = model->Execute({{"a", a}, {"b", a}});
  EXPECT_EQ(wrong_type.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_type.status().message(),
              HasSubstr("input 'b': expected datatype INT64, got FP32"));

  auto missing = model->Execute({{"a", a}, {"c", b}});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("input 'b' is missing"));

  Tensor short_bytes = Tensor::FromBytes(DataType::kInt64, {1, 2}, std::vector<std::byte>(8));
  auto wrong_size = model->Execute({{"a", a}, {"b", short_bytes}});
  EXPECT_EQ(wrong_size.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_size.status().message(), HasSubstr("needs 16 bytes, got 8"));
}

TEST(TorchModelTest, ShapeTheModelRejectsIsInternalWithTorchsMessage) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("tiny_cnn");
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"image", MakeTensor<float>(DataType::kFp32, {1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_THAT(out.status().message(), HasSubstr("failed in forward()"));
}

TEST(TorchModelTest, ConfigWithTheWrongNumberOfInputsFailsTheLoad) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("two_io");
  options.config.inputs.pop_back();
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto model = (*backend)->Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("lists 1 inputs but forward(a, b) takes 2"));
}

TorchBackend::Options WithoutWarmUp() {
  TorchBackend::Options options;
  options.warm_up = false;
  return options;
}

TEST(TorchModelTest, OutputsThatContradictTheConfigFailTheLoad) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("dict_out");
  options.config.outputs[1].name = "total";
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto model = (*backend)->Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("do not match what the model returns"));
  EXPECT_THAT(model.status().message(), HasSubstr("output 'total' is not in the dict"));
}

TEST(TorchModelTest, OutputDatatypeThatDiffersFromConfigIsReported) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("identity_fp32");
  options.config.outputs[0].dtype = DataType::kFp64;
  auto model = LoadOrDie(options, WithoutWarmUp());
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"input", MakeTensor<float>(DataType::kFp32, {1, 1}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_THAT(out.status().message(),
              HasSubstr("output 'output' has datatype FP32 but the config says FP64"));
}

TEST(TorchModelTest, OutputCountThatDiffersFromConfigIsReported) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("two_io");
  options.config.outputs.pop_back();
  auto model = LoadOrDie(options, WithoutWarmUp());
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"a", MakeTensor<float>(DataType::kFp32, {1, 4}, {1, 1, 1, 1})},
                             {"b", MakeTensor<int64_t>(DataType::kInt64, {1, 1}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_THAT(out.status().message(), HasSubstr("returned 2 tensors but the config lists 1"));
}

}  // namespace
}  // namespace inferd::backend
