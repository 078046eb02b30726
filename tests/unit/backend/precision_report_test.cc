// The precision report's runtime (backend/precision_report.h): a candidate is
// the one served by its runtime and precision together.
#include "backend/precision_report.h"

#include <gtest/gtest.h>

namespace inferd::backend {
namespace {

TEST(PrecisionReport, TheServedCandidateIsNamedByRuntimeAndPrecision) {
  PrecisionReport r;
  r.requested = "auto";
  r.chosen = "fp32";
  r.runtime = "onnxruntime";
  PrecisionTrial torch_fp32{"fp32", true, 1, 1, 0, 0, 0, 0, "the reference"};
  PrecisionTrial ort_fp32{"fp32", true, 0.5, 0.5, 1e-7, 0, 0, 1e-3, "chosen: 2.00x"};
  ort_fp32.runtime = "onnxruntime";
  PrecisionTrial ort_int8{"int8", true, 0.4, 0.6, 0.2, 0, 0, 1e-3, "refused: max error 0.2"};
  ort_int8.runtime = "onnxruntime";
  EXPECT_FALSE(IsChosen(torch_fp32, r));
  EXPECT_TRUE(IsChosen(ort_fp32, r));
  EXPECT_EQ(VerdictClass(torch_fp32, r), "reference");
  EXPECT_EQ(VerdictClass(ort_fp32, r), "chosen");
  EXPECT_EQ(VerdictClass(ort_int8, r), "refused");
  r.candidates = {torch_fp32, ort_fp32, ort_int8};
  const std::vector<std::string> lines = FormatPrecision(r);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("precision auto: onnxruntime fp32 (", 0), 0u) << lines[0];
  EXPECT_EQ(lines[2].rfind("  onnxruntime  fp32 ", 0), 0u) << lines[2];
}

}  // namespace
}  // namespace inferd::backend
