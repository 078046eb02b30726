#include "common/tensor.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/status.h"

namespace inferd {
namespace {

TEST(TensorTest, DataTypeNamesRoundTrip) {
  for (auto dt : {DataType::kBool, DataType::kUint8, DataType::kInt8, DataType::kInt16,
                  DataType::kInt32, DataType::kInt64, DataType::kFp16, DataType::kBf16,
                  DataType::kFp32, DataType::kFp64, DataType::kBytes}) {
    auto parsed = ParseDataType(DataTypeName(dt));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, dt);
  }
  EXPECT_FALSE(ParseDataType("FLOAT").has_value());
  EXPECT_EQ(DataTypeSize(DataType::kFp64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kBf16), 2u);
}

TEST(TensorTest, DataTypeListNamesEveryTypeInEnumOrder) {
  EXPECT_EQ(DataTypeList(),
            "BOOL, UINT8, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES");
}

TEST(TensorTest, AllocateBorrowReshape) {
  Tensor t = Tensor::Allocate(DataType::kInt32, {2, 3});
  EXPECT_EQ(t.byte_size(), 24u);
  EXPECT_EQ(t.num_elements(), 6);
  t.mutable_data_as<int32_t>()[5] = 7;
  Tensor r = t.Reshaped({6});
  EXPECT_EQ(r.data_as<int32_t>()[5], 7);
  EXPECT_EQ(ShapeToString(r.shape()), "[6]");

  auto body = std::make_shared<std::string>("abcd");
  Tensor b = Tensor::Borrow(DataType::kUint8, {4}, body, body->data(), body->size());
  body.reset();  // the tensor keeps it alive
  EXPECT_EQ(static_cast<char>(b.data()[3]), 'd');
  EXPECT_EQ(NumElements({2, -1}), -1);
}

TEST(TensorTest, AllocateUninitializedOwnsWritableBytesOfTheShape) {
  Tensor t = Tensor::AllocateUninitialized(DataType::kFp64, {3, 2});
  EXPECT_EQ(t.byte_size(), 48u);
  EXPECT_EQ(t.dtype(), DataType::kFp64);
  for (int i = 0; i < 6; ++i) t.mutable_data_as<double>()[i] = i * 0.5;
  Tensor copy = t;
  t = Tensor();  // the copy keeps the bytes alive
  EXPECT_EQ(copy.data_as<double>()[5], 2.5);
  EXPECT_EQ(Tensor::AllocateUninitialized(DataType::kInt8, {4, 0}).byte_size(), 0u);
  EXPECT_THROW(Tensor::AllocateUninitialized(DataType::kFp32, {2, -3}), std::invalid_argument);
}

TEST(StatusTest, MacrosPropagate) {
  auto fails = []() -> StatusOr<int> { return NotFound("no model 'x'"); };
  auto caller = [&]() -> Status {
    ASSIGN_OR_RETURN(int v, fails());
    (void)v;
    return Status::Ok();
  };
  Status st = caller();
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.WithContext("model store").message(), "model store: no model 'x'");
}

}  // namespace
}  // namespace inferd
