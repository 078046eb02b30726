#include "bench/report_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <sstream>
#include <string>
#include <vector>

namespace inferd::bench {
namespace {

StepResult MakeStep(const std::string& label, int concurrency, double rps, double p50, double p99,
                    std::map<int, std::uint64_t> failures = {}) {
  StepResult s;
  s.label = label;
  s.concurrency = concurrency;
  s.requests = 100;
  for (const auto& [status, n] : failures) s.failures += n;
  s.successes = s.requests - s.failures;
  s.failures_by_status = std::move(failures);
  s.requests_per_s = rps;
  s.measured_s = 15;
  s.latency.count = s.successes;
  s.latency.p50_ms = p50;
  s.latency.p99_ms = p99;
  s.latency.avg_ms = p50;
  s.stable = true;
  s.windows_run = 3;
  return s;
}

BenchReport MakeReport() {
  BenchReport r;
  r.options.model = "mobilenet \"v3\"";
  r.options.concurrency = {1, 2, 4};
  r.options.latency_budget_ms = 50;
  r.target = "/predictions/mobilenet";
  r.steps = {MakeStep("c=1", 1, 50, 20, 25), MakeStep("c=2", 2, 90, 22, 40),
             MakeStep("c=4", 4, 120, 33, 80, {{503, 3}, {kConnectionError, 1}})};
  r.best_within_budget = HighestStepWithinBudget(r.steps, 50, 99);
  return r;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

TEST(Budget, HighestThroughputWithinBudgetAndWithoutFailures) {
  std::vector<StepResult> steps = {MakeStep("c=1", 1, 50, 20, 25), MakeStep("c=2", 2, 90, 22, 40),
                                   MakeStep("c=4", 4, 120, 33, 45, {{503, 1}}),
                                   MakeStep("c=8", 8, 130, 60, 95)};
  auto best = HighestStepWithinBudget(steps, 50, 99);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(steps[*best].label, "c=2");  // c=4 failed a request; c=8 is over budget
  best = HighestStepWithinBudget(steps, 100, 50);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(steps[*best].label, "c=8");
  EXPECT_FALSE(HighestStepWithinBudget(steps, 10, 99).has_value());
}

TEST(Table, RowHasEveryColumn) {
  const BenchReport r = MakeReport();
  const std::string header = FormatTableHeader();
  for (const char* col : {"requests", "fail", "avg_ms", "min_ms", "max_ms", "p50_ms", "p90_ms",
                          "p95_ms", "p99_ms", "req/s"}) {
    EXPECT_NE(header.find(col), std::string::npos) << col;
  }
  const std::string row = FormatTableRow(r.steps[2]);
  EXPECT_NE(row.find("c=4"), std::string::npos);
  EXPECT_NE(row.find("conn:1 503:3"), std::string::npos) << row;
  EXPECT_NE(FormatBudgetLine(r).find("highest step c=2"), std::string::npos) << FormatBudgetLine(r);
}

TEST(Json, ParsesAndHasTheFields) {
  const std::string text = ToJson(MakeReport());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  EXPECT_EQ(std::string_view(doc["model"]), "mobilenet \"v3\"");
  EXPECT_EQ(std::string_view(doc["mode"]), "closed");
  EXPECT_EQ(std::string_view(doc["percentile_method"]), "nearest-rank");
  simdjson::dom::array steps = doc["steps"];
  ASSERT_EQ(steps.size(), 3u);
  simdjson::dom::element last = steps.at(2);
  EXPECT_EQ(std::string_view(last["label"]), "c=4");
  EXPECT_EQ(int64_t(last["concurrency"]), 4);
  EXPECT_EQ(int64_t(last["failures"]), 4);
  EXPECT_EQ(int64_t(last["failures_by_status"]["503"]), 3);
  EXPECT_EQ(int64_t(last["failures_by_status"]["conn"]), 1);
  EXPECT_DOUBLE_EQ(double(last["requests_per_s"]), 120.0);
  EXPECT_DOUBLE_EQ(double(last["latency_ms"]["p99"]), 80.0);
  for (const char* key : {"avg", "min", "max", "p50", "p90", "p95", "p99"}) {
    double v;
    EXPECT_EQ(last["latency_ms"][key].get(v), simdjson::SUCCESS) << key;
  }
  EXPECT_EQ(std::string_view(doc["latency_budget"]["best_step"]), "c=2");
}

TEST(ServerSide, InTableJsonAndCsvWhenMeasured) {
  BenchReport r = MakeReport();
  r.steps[1].has_server = true;
  r.steps[1].sent_total = 120;
  r.steps[1].server = {120, 2500, 400, 2000};
  EXPECT_NE(FormatTableRow(r.steps[1]).find("server: 120 requests"), std::string::npos);
  EXPECT_EQ(FormatTableRow(r.steps[0]).find("server:"), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const std::string text = ToJson(r);
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  EXPECT_DOUBLE_EQ(double(doc["steps"].at(1)["server"]["queue_us"]), 400.0);
  simdjson::dom::element absent;
  EXPECT_NE(doc["steps"].at(0)["server"].get(absent), simdjson::SUCCESS);
  const std::vector<std::string> lines = Split(ToCsv(r), '\n');
  const std::size_t columns = Split(lines[0], ',').size();
  EXPECT_EQ(Split(lines[1], ',').size(), columns);
  EXPECT_EQ(Split(lines[2], ',').size(), columns);
  EXPECT_NE(lines[2].find(",120,2500.0,400.0,2000.0"), std::string::npos) << lines[2];
}

TEST(Csv, OneRowPerStepSameColumnsAsHeader) {
  const std::string text = ToCsv(MakeReport());
  std::vector<std::string> lines = Split(text, '\n');
  ASSERT_EQ(lines.back(), "");  // ends with a newline
  lines.pop_back();
  ASSERT_EQ(lines.size(), 4u);
  const std::vector<std::string> header = Split(lines[0], ',');
  EXPECT_EQ(header[0], "mode");
  const auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(Split(lines[i], ',').size(), header.size()) << lines[i];
  }
  const std::vector<std::string> row = Split(lines[3], ',');
  EXPECT_EQ(row[col("label")], "c=4");
  EXPECT_EQ(row[col("failures")], "4");
  EXPECT_EQ(row[col("failures_by_status")], "conn:1 503:3");
  EXPECT_EQ(row[col("p99_ms")], "80.000");
  EXPECT_EQ(row[col("requests_per_s")], "120.000");
}

}  // namespace
}  // namespace inferd::bench
