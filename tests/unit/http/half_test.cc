// The hand-written binary16 conversions (used where the compiler lacks
// _Float16: clang 14, the fuzzing build) give the compiler's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "http/internal/half.h"

namespace inferd::http::internal {
namespace {

#if INFERD_HAVE_FLOAT16
TEST(HalfTest, SoftConversionsMatchFloat16) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float soft = SoftFp16ToFloat(static_cast<uint16_t>(b));
    const float hard = Fp16ToFloat(static_cast<uint16_t>(b));
    if (std::isnan(hard)) {
      EXPECT_TRUE(std::isnan(soft)) << b;
    } else {
      EXPECT_EQ(std::memcmp(&soft, &hard, 4), 0) << b;
    }
  }
  std::mt19937 rng(9);
  auto check = [](uint32_t x) {
    float f;
    std::memcpy(&f, &x, 4);
    if (std::isnan(f)) return;  // payload bits differ between implementations; both stay NaN
    ASSERT_EQ(SoftFloatToFp16(f), FloatToFp16(f)) << std::hexfloat << f;
  };
  for (uint32_t x = 0; x < 0x80000000u; x += 0x1fffu) {  // every exponent, many mantissas
    check(x);
    check(x | 0x80000000u);
  }
  // Around each half-precision rounding point: halfway cases decide ties to even.
  for (uint32_t b = 0; b < 0x7c00u; ++b) {
    float f = SoftFp16ToFloat(static_cast<uint16_t>(b));
    uint32_t x;
    std::memcpy(&x, &f, 4);
    for (int d = -3; d <= 3; ++d) check(x + static_cast<uint32_t>(d) * 0x800u);
    check(x + 0x1000u);
  }
  for (int i = 0; i < 200000; ++i) check(rng());
}
#endif

TEST(HalfTest, SoftConversionKnownValues) {
  EXPECT_EQ(SoftFloatToFp16(1.0f), 0x3c00);
  EXPECT_EQ(SoftFloatToFp16(-2.0f), 0xc000);
  EXPECT_EQ(SoftFloatToFp16(65504.0f), 0x7bff);
  EXPECT_EQ(SoftFloatToFp16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(SoftFloatToFp16(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(SoftFloatToFp16(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(SoftFp16ToFloat(SoftFloatToFp16(NAN))));
  EXPECT_EQ(SoftFp16ToFloat(0x3555), 0.333251953125f);
}

}  // namespace
}  // namespace inferd::http::internal
