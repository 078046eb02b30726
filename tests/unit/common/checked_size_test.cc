// Checked size arithmetic (common/checked_math.h) and the shape rules built
// on it (common/tensor.h): no size a client sends may wrap round.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "common/checked_math.h"
#include "common/json_writer.h"
#include "common/tensor.h"

namespace inferd {
namespace {

TEST(CheckedMath, OverflowIsNulloptNotAWrappedValue) {
  EXPECT_EQ(CheckedAdd<size_t>(2, 3), std::optional<size_t>(5));
  EXPECT_EQ(CheckedAdd<size_t>(SIZE_MAX, 2), std::nullopt);
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul<int64_t>(-3, 4), std::optional<int64_t>(-12));
}

TEST(CheckedShape, NumElementsNeverOverflows) {
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({3, 0, 5}), 0);
  EXPECT_EQ(NumElements({-1, 3}), -1);
  // 2^62 * 4 wraps to 0 in int64 arithmetic; now it is simply invalid.
  EXPECT_EQ(NumElements({int64_t{1} << 62, 4}), -1);
  EXPECT_EQ(NumElements({int64_t{1} << 20, int64_t{1} << 20}), int64_t{1} << 40);
  EXPECT_EQ(NumElements({int64_t{1} << 20, (int64_t{1} << 20) + 1}), -1);
}

TEST(CheckedShape, AZeroDimDoesNotExcuseTheOthers) {
  EXPECT_TRUE(CheckShape({0, 5}, "x").ok());
  Status st = CheckShape({0, int64_t{1} << 62, 4}, "input 'x'");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "input 'x': shape [0,4611686018427387904,4] is too large (more than 2^40 elements in "
            "its non-zero dimensions)");
  EXPECT_EQ(NumElements({0, int64_t{1} << 62, 4}), -1);
  EXPECT_EQ(CheckShape({2, -1}, "y").message(), "y: shape [2,-1] has a negative dimension");
}

TEST(CheckedShape, ByteSizeAndAllocate) {
  EXPECT_EQ(ByteSize(DataType::kFp64, {3, 2}), 48);
  EXPECT_EQ(ByteSize(DataType::kFp32, {int64_t{1} << 50}), -1);
  EXPECT_THROW(Tensor::Allocate(DataType::kFp32, {int64_t{1} << 50}), std::invalid_argument);
  EXPECT_EQ(Tensor::Allocate(DataType::kInt16, {2, 0}).byte_size(), 0u);
}

// Text that is not UTF-8 (a client's path, a model name) keeps the JSON valid.
TEST(JsonStrings, InvalidUtf8BecomesReplacementCharacters) {
  static const char kIn[] = "ok \xC3\xA9 \xFF \xC0\xAF \xED\xA0\x80 \xF0\x9F\x98\x80 \xE2\x82";
  std::string out;
  AppendJsonString(out, std::string(kIn, sizeof kIn - 1));
  EXPECT_EQ(out, "\"ok \xC3\xA9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                 " \xF0\x9F\x98\x80 \xEF\xBF\xBD\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace inferd
