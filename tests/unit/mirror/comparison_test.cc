// The comparison math on hand-made answers whose differences are known.
#include "mirror/comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace inferd::mirror {
namespace {

NamedTensor Fp32(const std::string& name, Shape shape, std::vector<float> values) {
  Tensor t = Tensor::Allocate(DataType::kFp32, shape);
  std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(float));
  return {name, t};
}

TEST(ComparePair, MaxAndMeanAbsErrorAndTop1PerRow) {
  // Row 0: arg-max 2 on both sides; row 1: 0 against 1.
  auto p = Fp32("logits", {2, 3}, {0.0f, 1.0f, 3.0f, 2.0f, 1.0f, 0.0f});
  auto c = Fp32("logits", {2, 3}, {0.5f, 1.0f, 2.0f, 1.0f, 1.5f, 0.0f});
  PairDiff d = ComparePair({p}, {c});
  ASSERT_TRUE(d.mismatch.empty()) << d.mismatch;
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_TRUE(d.outputs[0].classifier);
  EXPECT_EQ(d.outputs[0].elements, 6);
  EXPECT_DOUBLE_EQ(d.outputs[0].max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(d.outputs[0].sum_abs_error, 0.5 + 0 + 1 + 1 + 0.5 + 0);
  EXPECT_EQ(d.outputs[0].top1_rows, 2);
  EXPECT_EQ(d.outputs[0].top1_agree, 1);
  EXPECT_EQ(d.top1_disagree(), 1);
  EXPECT_EQ(d.outputs[0].first_primary_top1, 2);
  EXPECT_DOUBLE_EQ(d.outputs[0].max_abs_primary, 3.0);  // the scale of a relative error
}

TEST(ComparePair, PairsByNameThenByPosition) {
  auto a1 = Fp32("a", {1, 1}, {1.0f});
  auto b1 = Fp32("b", {1, 1}, {5.0f});
  auto a2 = Fp32("a", {1, 1}, {1.5f});
  auto b2 = Fp32("b", {1, 1}, {5.0f});
  PairDiff by_name = ComparePair({a1, b1}, {b2, a2});
  ASSERT_TRUE(by_name.mismatch.empty());
  EXPECT_DOUBLE_EQ(by_name.outputs[0].max_abs_error, 0.5);  // a against a
  EXPECT_DOUBLE_EQ(by_name.outputs[1].max_abs_error, 0.0);
  // Other names (a remote model's): by position.
  PairDiff by_pos = ComparePair({a1}, {Fp32("output0", {1, 1}, {3.0f})});
  ASSERT_TRUE(by_pos.mismatch.empty());
  EXPECT_DOUBLE_EQ(by_pos.outputs[0].max_abs_error, 2.0);
  EXPECT_FALSE(by_pos.outputs[0].classifier);  // one class is no classifier
}

TEST(ComparePair, ShapesOrCountsThatDifferAreAMismatch) {
  auto p = Fp32("y", {1, 2}, {1, 2});
  EXPECT_NE(ComparePair({p}, {Fp32("y", {2, 1}, {1, 2})}).mismatch.find("FP32[1,2]"),
            std::string::npos);
  EXPECT_FALSE(ComparePair({p}, {}).mismatch.empty());
}

TEST(ComparePair, OtherDtypesAreReadAsNumbers) {
  Tensor i = Tensor::Allocate(DataType::kInt64, {1, 2});
  int64_t iv[] = {3, -4};
  std::memcpy(i.mutable_data(), iv, sizeof(iv));
  Tensor h = Tensor::Allocate(DataType::kFp16, {1, 2});
  uint16_t hv[] = {0x4200, 0xC400};  // 3.0, -4.0 in half precision
  std::memcpy(h.mutable_data(), hv, sizeof(hv));
  Tensor f = Fp32("", {1, 2}, {3.5f, -4.0f}).tensor;
  EXPECT_DOUBLE_EQ(ComparePair({{"x", i}}, {{"x", f}}).outputs[0].max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(ComparePair({{"x", h}}, {{"x", f}}).outputs[0].max_abs_error, 0.5);
}

TEST(ComparePair, ANanOnOneSideIsTheLargestError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<NamedTensor> p = {Fp32("y", {1, 1}, {nan})};
  std::vector<NamedTensor> one = {Fp32("y", {1, 1}, {1.0f})};
  std::vector<NamedTensor> other_nan = {Fp32("y", {1, 1}, {nan})};
  EXPECT_TRUE(std::isinf(ComparePair(p, one).outputs[0].max_abs_error));
  EXPECT_EQ(ComparePair(p, other_nan).outputs[0].max_abs_error, 0);
}

TEST(Comparison, AccumulatesOverPairsAndKeepsTheWorstK) {
  Comparison c({/*top_k=*/2, /*latency_window=*/3});
  int refs = 0;
  auto ref = [&] {
    ++refs;
    InputRef r;
    r.seq = static_cast<uint64_t>(refs);
    return r;
  };
  // Three pairs: errors 0 (exact), 0.25, 1.0 on 2 elements each; one top-1 miss.
  auto zero = Fp32("y", {1, 2}, {0, 0});
  c.Record(ComparePair({zero}, {zero}), 1, 10, ref);
  c.Record(ComparePair({zero}, {Fp32("y", {1, 2}, {0.25f, 0})}), 2, 20, ref);
  c.Record(ComparePair({zero}, {Fp32("y", {1, 2}, {0, 1})}), 3, 30, ref);
  c.Record(ComparePair({zero}, {Fp32("y", {2, 1}, {0, 1})}), 4, 40, ref);  // mismatched
  ComparisonSummary s = c.Summarize();
  EXPECT_EQ(s.compared, 3);
  EXPECT_EQ(s.mismatched, 1);
  EXPECT_DOUBLE_EQ(s.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_abs_error, 1.25 / 6);
  ASSERT_TRUE(s.top1_agreement.has_value());
  EXPECT_DOUBLE_EQ(*s.top1_agreement, 2.0 / 3);  // [0,0] vs [0,1]: arg-max 0 against 1
  ASSERT_EQ(s.top_disagreements.size(), 2u);
  EXPECT_EQ(s.top_disagreements[0].top1_disagree, 1);  // the top-1 miss first
  EXPECT_DOUBLE_EQ(s.top_disagreements[1].max_abs_error, 0.25);
  EXPECT_EQ(refs, 2);  // the exact pair made no reference
  // The latency window keeps the last 3 pairs: 2, 3, 4 and 20, 30, 40.
  EXPECT_EQ(s.primary.samples, 3);
  EXPECT_DOUBLE_EQ(s.primary.p50_ms, 3);
  EXPECT_DOUBLE_EQ(s.candidate.p99_ms, 40);
}

TEST(MakeInputRef, HashesEveryInputAndKeepsTheHead) {
  scheduler::InferenceRequest a, b;
  a.id = "req-1";
  a.raw = {{"", std::string("\x01\x02\x03", 3)}};
  b.raw = {{"", std::string("\x01\x02\x04", 3)}};
  InputRef ra = MakeInputRef(7, a), rb = MakeInputRef(8, b);
  EXPECT_EQ(ra.seq, 7u);
  EXPECT_EQ(ra.id, "req-1");
  EXPECT_EQ(ra.head_hex, "010203");
  EXPECT_EQ(ra.bytes, 3);
  EXPECT_NE(ra.hash, rb.hash);
  EXPECT_EQ(ra.hash, MakeInputRef(9, a).hash);
}

}  // namespace
}  // namespace inferd::mirror
