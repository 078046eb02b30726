#include "bench/svg_plot.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inferd::bench {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

std::vector<StepResult> Sweep() {
  std::vector<StepResult> steps;
  const double rps[] = {40, 75, 110, 118};
  const double p50[] = {24, 26, 35, 66};
  const double p99[] = {30, 41, 62, 140};
  for (int i = 0; i < 4; ++i) {
    StepResult s;
    s.concurrency = 1 << i;
    s.label = "c=" + std::to_string(s.concurrency);
    s.requests_per_s = rps[i];
    s.latency.p50_ms = p50[i];
    s.latency.p99_ms = p99[i];
    steps.push_back(s);
  }
  return steps;
}

TEST(NiceTicks, OneTwoFiveSteps) {
  EXPECT_EQ(NiceTicks(10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(NiceTicks(118), (std::vector<double>{0, 50, 100, 150}));
  const std::vector<double> unit = NiceTicks(0);  // treated as [0, 1]
  ASSERT_EQ(unit.size(), 6u);
  EXPECT_DOUBLE_EQ(unit[1], 0.2);
  EXPECT_DOUBLE_EQ(unit.back(), 1.0);
  const std::vector<double> t = NiceTicks(147);
  EXPECT_GE(t.back(), 147);
  EXPECT_LE(t.size(), 10u);
}

TEST(Svg, HasAxesUnitsLegendAndPointLabels) {
  PlotOptions options;
  options.title = "mobilenet: throughput vs latency";
  options.budget_ms = 100;
  const std::string svg = RenderCurveSvg(Sweep(), options);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("throughput (requests/s)"), std::string::npos);
  EXPECT_NE(svg.find("latency (ms)"), std::string::npos);
  EXPECT_NE(svg.find("mobilenet: throughput vs latency"), std::string::npos);
  EXPECT_NE(svg.find("p50 latency"), std::string::npos);
  EXPECT_NE(svg.find("p99 latency"), std::string::npos);
  EXPECT_NE(svg.find("id=\"x-axis\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"y-axis\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"budget\""), std::string::npos);
  EXPECT_NE(svg.find("p99 budget 100 ms"), std::string::npos);
  // Each step labelled on both series.
  for (const char* label : {">c=1<", ">c=2<", ">c=4<", ">c=8<"}) {
    EXPECT_EQ(Count(svg, label), 2) << label;
  }
  // Tick labels: x up to 150 req/s, y up to 150 ms.
  EXPECT_NE(svg.find(">150<"), std::string::npos);
  EXPECT_NE(svg.find(">100<"), std::string::npos);
  // 4 points per series: 4 circles (p50, plus one in the legend) and 4 squares.
  EXPECT_EQ(Count(svg, "<circle"), 5);
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  // Balanced elements.
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
}

TEST(Svg, EscapesTextAndCopesWithNoData) {
  PlotOptions options;
  options.title = "a<b & c";
  const std::string svg = RenderCurveSvg({}, options);
  EXPECT_NE(svg.find("a&lt;b &amp; c"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace inferd::bench
