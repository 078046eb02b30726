// The comparison of a candidate with the reference on hand-made models whose
// differences are known.
#include "optimize/candidate_check.h"

#include <gtest/gtest.h>

#include <cstring>

namespace inferd::optimize {
namespace {

// y = x * scale, or (permute) each row reversed; fails when asked.
class ScaleModel : public backend::Model {
 public:
  ScaleModel(float scale, bool reverse = false, std::string output = "y")
      : scale_(scale), reverse_(reverse), output_(std::move(output)) {}
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    if (fail_) return Internal("boom");
    const Tensor& x = inputs[0].tensor;
    Tensor y = Tensor::Allocate(DataType::kFp32, x.shape());
    const int64_t cols = x.shape().back();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const int64_t src = reverse_ ? (i / cols) * cols + (cols - 1 - i % cols) : i;
      y.mutable_data_as<float>()[i] = x.data_as<float>()[src] * scale_;
    }
    return std::vector<NamedTensor>{{output_, y}};
  }
  bool fail_ = false;

 private:
  float scale_;
  bool reverse_;
  std::string output_;
};

Tensor Rows(Shape shape, std::vector<float> v) {
  Tensor t = Tensor::Allocate(DataType::kFp32, shape);
  std::memcpy(t.mutable_data(), v.data(), v.size() * sizeof(float));
  return t;
}

ComparisonSamples TwoSamples() {
  ComparisonSamples s;
  s.runs = {{{{"x", Rows({1, 3}, {1, 2, 4})}}, 1, true},
            {{{"x", Rows({1, 3}, {3, 2, 1})}}, 1, true},
            {{{"x", Rows({2, 3}, {1, 2, 4, 3, 2, 1})}}, 2, false}};
  s.samples = 2;
  s.source = "hand-made";
  return s;
}

TEST(CandidateCheck, ErrorsRelativeToTheLargestReferenceOutputAndTop1) {
  ScaleModel reference(1.0f);
  const ComparisonSamples samples = TwoSamples();
  auto ref = RunReference(reference, samples);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_EQ(ref->outputs.size(), 3u);

  ScaleModel same(1.0f);
  auto m = MeasureCandidate(same, samples, *ref);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->max_abs_error, 0);
  EXPECT_EQ(m->max_rel_error, 0);
  EXPECT_EQ(m->top1_agreed, 2);
  EXPECT_EQ(m->top1_checked, 2);  // the samples alone, not the batch

  ScaleModel scaled(1.25f);  // the largest reference output is 4: error 1, relative 0.25
  m = MeasureCandidate(scaled, samples, *ref);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_DOUBLE_EQ(m->max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(m->max_rel_error, 0.25);
  EXPECT_EQ(m->top1_agreed, 2);

  ScaleModel reversed(1.0f, true);  // every arg-max moves
  m = MeasureCandidate(reversed, samples, *ref);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->top1_agreed, 0);
  EXPECT_EQ(m->top1_checked, 2);
  EXPECT_DOUBLE_EQ(m->max_abs_error, 3.0);
}

TEST(CandidateCheck, ACandidateThatFailsOrDoesNotLineUpIsNamed) {
  ScaleModel reference(1.0f);
  const ComparisonSamples samples = TwoSamples();
  auto ref = RunReference(reference, samples);
  ASSERT_TRUE(ref.ok());
  ScaleModel failing(1.0f);
  failing.fail_ = true;
  auto m = MeasureCandidate(failing, samples, *ref);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "sample 1 alone: boom");
  ScaleModel renamed(1.0f, false, "z");
  m = MeasureCandidate(renamed, samples, *ref);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no output 'y'"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace inferd::optimize
