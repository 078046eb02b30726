#include "optimize/optimize_report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace inferd::optimize {
namespace {

OptimizeReport Sample() {
  OptimizeReport r;
  r.stamp = "format 1; model.pt sha256 ab";
  r.model = "mlp";
  r.version = 3;
  r.samples = 4;
  r.sample_source = "drawn for the declared shapes";
  CandidateRow ref{"torchscript", "model.pt", true, "the reference (fp32)", true, "", 0, 0, 0, 0,
                   0.125};
  CandidateRow onnx{"onnx", "model.onnx", true, "exported (opset 17)", true, "", 2.5e-7, 1e-7, 4,
                    4,      0.0625};
  CandidateRow failed{"onnx_int8",
                      "model.int8.onnx",
                      true,
                      "int8: 2 MatMul/Gemm (per-column)",
                      false,
                      "sample 1 alone: boom",
                      0,
                      0,
                      0,
                      0,
                      0};
  CandidateRow refused{"onnx_optimized",
                       "model.opt.onnx",
                       false,
                       "not made: no ONNX export",
                       false,
                       "",
                       0,
                       0,
                       0,
                       0,
                       0};
  r.rows = {ref, onnx, failed, refused};
  return r;
}

TEST(OptimizeReport, JsonRoundTrips) {
  const OptimizeReport r = Sample();
  auto back = ParseReportJson(WriteReportJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->stamp, r.stamp);
  EXPECT_EQ(back->model, "mlp");
  EXPECT_EQ(back->version, 3);
  EXPECT_EQ(back->samples, 4);
  EXPECT_EQ(back->sample_source, r.sample_source);
  ASSERT_EQ(back->rows.size(), 4u);
  EXPECT_EQ(back->rows[1].candidate, "onnx");
  EXPECT_EQ(back->rows[1].file, "model.onnx");
  EXPECT_TRUE(back->rows[1].present);
  EXPECT_TRUE(back->rows[1].compared);
  EXPECT_DOUBLE_EQ(back->rows[1].max_abs_error, 2.5e-7);
  EXPECT_DOUBLE_EQ(back->rows[1].max_rel_error, 1e-7);
  EXPECT_EQ(back->rows[1].top1_agreed, 4);
  EXPECT_EQ(back->rows[1].top1_checked, 4);
  EXPECT_DOUBLE_EQ(back->rows[0].ms_per_item, 0.125);
  EXPECT_EQ(back->rows[2].error, "sample 1 alone: boom");
  EXPECT_FALSE(back->rows[3].present);
  // The same text again: printing a report read back gives the same table.
  EXPECT_EQ(WriteReportJson(*back), WriteReportJson(r));
}

TEST(OptimizeReport, ATracebackIsShownAsItsFirstAndLastLine) {
  OptimizeReport r = Sample();
  r.rows[0].compared = false;
  r.rows[0].error =
      "sample 1 alone: failed in forward(): The following operation failed.\n"
      "Traceback of TorchScript:\n  File \"m.py\", line 9\n\nbuiltins.ValueError: negative input\n";
  std::ostringstream out;
  PrintReport(r, "", out);
  EXPECT_NE(out.str().find("failed on the samples: sample 1 alone: failed in forward(): The "
                           "following operation failed. ... builtins.ValueError: negative "
                           "input\n"),
            std::string::npos)
      << out.str();
}

TEST(OptimizeReport, RefusesWhatIsNotAReportOfThisFormat) {
  EXPECT_FALSE(ParseReportJson("not json").ok());
  EXPECT_FALSE(ParseReportJson(R"({"format": 99})").ok());
  std::string json = WriteReportJson(Sample());
  json.replace(json.find("\"top1_agreed\""), 13, "\"top1_agrees\"");
  auto parsed = ParseReportJson(json);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("candidates[0]"), std::string::npos);
}

TEST(OptimizeReport, TheTable) {
  std::ostringstream out;
  PrintReport(Sample(), "up to date", out);
  const std::string t = out.str();
  EXPECT_NE(t.find("model mlp version 3: 4 samples (drawn for the declared shapes), up to date\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("max abs"), std::string::npos) << t;
  // Measured rows: figures, top-1, ms; the reference has no top-1.
  EXPECT_NE(t.find("onnx            model.onnx       exported (opset 17)"), std::string::npos) << t;
  EXPECT_NE(t.find("2.50e-07  1.00e-07  4/4     0.062"), std::string::npos) << t;
  EXPECT_NE(t.find("0         0         -       0.125"), std::string::npos) << t;
  // Rows that did not run: the reason to the end of the line; a file not present shows "-".
  EXPECT_NE(
      t.find("int8: 2 MatMul/Gemm (per-column); failed on the samples: sample 1 alone: boom\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("onnx_optimized  -                not made: no ONNX export\n"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace inferd::optimize
