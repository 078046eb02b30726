#include "http/tensor_json.h"

#include <gtest/gtest.h>

#include <cstring>
#include <list>
#include <memory>

#include "http/internal/half.h"

namespace inferd::http {
namespace {

class TensorJsonTest : public ::testing::Test {
 protected:
  simdjson::dom::element Parse(const std::string& text) {
    docs_.emplace_back(text);
    parsers_.emplace_back(std::make_unique<simdjson::dom::parser>());
    return parsers_.back()->parse(docs_.back()).value();
  }
  StatusOr<Tensor> Flat(const std::string& text, DataType dtype, Shape shape) {
    return DecodeFlatJson(Parse(text), dtype, std::move(shape), "input 'x'");
  }
  std::string Write(const Tensor& t, bool nested) {
    JsonWriter w;
    Status st = WriteTensorJson(w, t, nested);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return w.Take();
  }
  std::list<simdjson::padded_string> docs_;
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers_;
};

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> v(t.byte_size() / sizeof(T));
  std::memcpy(v.data(), t.data(), t.byte_size());
  return v;
}

TEST_F(TensorJsonTest, DecodesEveryFixedSizeDatatype) {
  auto b = Flat("[true,false,1,0]", DataType::kBool, {4});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Values<uint8_t>(*b), (std::vector<uint8_t>{1, 0, 1, 0}));
  auto u8 = Flat("[0,255]", DataType::kUint8, {2});
  EXPECT_EQ(Values<uint8_t>(*u8), (std::vector<uint8_t>{0, 255}));
  auto i8 = Flat("[-128,127]", DataType::kInt8, {2});
  EXPECT_EQ(Values<int8_t>(*i8), (std::vector<int8_t>{-128, 127}));
  auto i16 = Flat("[-32768,32767]", DataType::kInt16, {2});
  EXPECT_EQ(Values<int16_t>(*i16), (std::vector<int16_t>{-32768, 32767}));
  auto i32 = Flat("[-2147483648,2147483647]", DataType::kInt32, {2});
  EXPECT_EQ(Values<int32_t>(*i32), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  auto i64 = Flat("[-9223372036854775808,9223372036854775807,2.0]", DataType::kInt64, {3});
  ASSERT_TRUE(i64.ok()) << i64.status().ToString();
  EXPECT_EQ(Values<int64_t>(*i64), (std::vector<int64_t>{INT64_MIN, INT64_MAX, 2}));
  auto f32 = Flat("[[0.1,-2],[3e38,1]]", DataType::kFp32, {2, 2});
  EXPECT_EQ(Values<float>(*f32), (std::vector<float>{0.1f, -2.0f, 3e38f, 1.0f}));
  EXPECT_EQ(f32->shape(), (Shape{2, 2}));
  auto f64 = Flat("[0.1,5]", DataType::kFp64, {2});
  EXPECT_EQ(Values<double>(*f64), (std::vector<double>{0.1, 5.0}));
  auto f16 = Flat("[0.5,-1.25]", DataType::kFp16, {2});
  auto h = Values<uint16_t>(*f16);
  EXPECT_EQ(internal::Fp16ToFloat(h[0]), 0.5f);
  EXPECT_EQ(internal::Fp16ToFloat(h[1]), -1.25f);
  auto bf = Flat("[0.5,-3]", DataType::kBf16, {2});
  auto hb = Values<uint16_t>(*bf);
  EXPECT_EQ(internal::Bf16ToFloat(hb[0]), 0.5f);
  EXPECT_EQ(internal::Bf16ToFloat(hb[1]), -3.0f);
}

TEST_F(TensorJsonTest, DecodesBytesInTheV2SerializedForm) {
  auto t = Flat(R"(["ab",""])", DataType::kBytes, {2});
  ASSERT_TRUE(t.ok());
  const uint8_t want[] = {2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0};
  ASSERT_EQ(t->byte_size(), sizeof(want));
  EXPECT_EQ(std::memcmp(t->data(), want, sizeof(want)), 0);
  EXPECT_EQ(Write(*t, false), R"(["ab",""])");
}

TEST_F(TensorJsonTest, RefusesOutOfRangeAndWrongTypes) {
  auto a = Flat("[1,300]", DataType::kUint8, {2});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.status().message(),
            "input 'x': element 1: expected an integer in [0, 255] for UINT8, got 300");
  auto b = Flat("[1.5]", DataType::kInt32, {1});
  EXPECT_NE(b.status().message().find("element 0: expected an integer"), std::string::npos);
  auto c = Flat(R"([1,"2"])", DataType::kFp32, {2});
  EXPECT_EQ(c.status().message(), "input 'x': element 1: expected a number (or \"NaN\", \"Infinity\", \"-Infinity\") for "
            "FP32, got \"2\"");
  auto d = Flat("[2]", DataType::kBool, {1});
  EXPECT_NE(d.status().message().find("expected true or false for BOOL"), std::string::npos);
  auto e = Flat("[1]", DataType::kBytes, {1});
  EXPECT_NE(e.status().message().find("expected a string for BYTES"), std::string::npos);
  auto f = Flat("[-1]", DataType::kUint8, {1});
  EXPECT_FALSE(f.ok());
  auto g = Flat("[null]", DataType::kFp32, {1});
  EXPECT_FALSE(g.ok());
}

TEST_F(TensorJsonTest, RefusesDataLengthNotMatchingShape) {
  auto t = Flat("[1,2,3,4,5]", DataType::kFp32, {2, 3});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "input 'x': shape [2,3] needs 6 elements, data has 5");
  EXPECT_FALSE(Flat("[1,2,3,4,5,6,7]", DataType::kFp32, {2, 3}).ok());
}

TEST_F(TensorJsonTest, NestedInfersShape) {
  auto t = DecodeNestedJson(Parse("[[[1,2,3]],[[4,5,6]]]"), DataType::kInt64, "input 'x'");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(Values<int64_t>(*t), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  auto scalar = DecodeNestedJson(Parse("7.5"), DataType::kFp32, "input 'x'");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape(), Shape{});
  auto empty = DecodeNestedJson(Parse("[]"), DataType::kFp32, "input 'x'");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape(), Shape{0});
}

TEST_F(TensorJsonTest, NestedRefusesRaggedLists) {
  auto t = DecodeNestedJson(Parse("[[1,2],[3]]"), DataType::kFp32, "input 'x'");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "input 'x': ragged nested list: a list at depth 1 has 1 elements, expected 2 like the "
            "first one");
  auto u = DecodeNestedJson(Parse("[[1,2],3]"), DataType::kFp32, "input 'x'");
  EXPECT_NE(u.status().message().find("expected a list of 2 at depth 1, got 3"), std::string::npos);
  auto v = DecodeNestedJson(Parse("[1,[2]]"), DataType::kFp32, "input 'x'");
  EXPECT_NE(v.status().message().find("expected a value at depth 1"), std::string::npos);
}

TEST_F(TensorJsonTest, WritesFlatAndNestedAndRoundtrips) {
  auto t = Flat("[[1.5,-2],[0.1,3.25],[1e-07,4]]", DataType::kFp32, {3, 2});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Write(*t, false), "[1.5,-2,0.1,3.25,1e-07,4]");
  std::string nested = Write(*t, true);
  EXPECT_EQ(nested, "[[1.5,-2],[0.1,3.25],[1e-07,4]]");
  auto back = DecodeNestedJson(Parse(nested), DataType::kFp32, "x");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape(), t->shape());
  EXPECT_EQ(Values<float>(*back), Values<float>(*t));
}

TEST_F(TensorJsonTest, WritesEveryDatatype) {
  EXPECT_EQ(Write(*Flat("[true,false]", DataType::kBool, {2}), false), "[true,false]");
  EXPECT_EQ(Write(*Flat("[255]", DataType::kUint8, {1}), false), "[255]");
  EXPECT_EQ(Write(*Flat("[-128]", DataType::kInt8, {1}), false), "[-128]");
  EXPECT_EQ(Write(*Flat("[-5]", DataType::kInt16, {1}), false), "[-5]");
  EXPECT_EQ(Write(*Flat("[-5]", DataType::kInt32, {1}), false), "[-5]");
  EXPECT_EQ(Write(*Flat("[9223372036854775807]", DataType::kInt64, {1}), false),
            "[9223372036854775807]");
  EXPECT_EQ(Write(*Flat("[0.5]", DataType::kFp16, {1}), false), "[0.5]");
  EXPECT_EQ(Write(*Flat("[0.5]", DataType::kBf16, {1}), false), "[0.5]");
  EXPECT_EQ(Write(*Flat("[0.1]", DataType::kFp64, {1}), false), "[0.1]");
  EXPECT_EQ(Write(*Flat("[]", DataType::kFp32, {0, 3}), true), "[]");
  EXPECT_EQ(Write(*Flat("4", DataType::kFp32, {}), true), "4");
}

TEST(SplitBytesElements, ChecksLengthsAndCount) {
  std::vector<std::byte> buf;
  AppendBytesElement(buf, "hello");
  AppendBytesElement(buf, "");
  auto ok = SplitBytesElements(buf.data(), buf.size(), 2, "x");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0], "hello");
  EXPECT_EQ((*ok)[1], "");
  EXPECT_FALSE(SplitBytesElements(buf.data(), buf.size(), 3, "x").ok());
  auto truncated = SplitBytesElements(buf.data(), 7, -1, "x");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("declares 5 bytes but only 3 remain"),
            std::string::npos);
  EXPECT_FALSE(SplitBytesElements(buf.data(), buf.size() - 1, -1, "x").ok());
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(internal::FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(internal::Bf16ToFloat(internal::FloatToBf16(1.00390625f)), 1.0f);  // tie -> even
  EXPECT_EQ(internal::FloatToFp16(1.0f), 0x3c00);
  EXPECT_EQ(internal::Fp16ToFloat(0xc000), -2.0f);
}

}  // namespace
}  // namespace inferd::http
