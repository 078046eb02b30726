#include "bench/bench_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <vector>

namespace inferd::bench {
namespace {

// Parses `args` (without the program name) into options.
BenchOptions Parse(std::vector<std::string> args) {
  CLI::App app;
  BenchOptions o;
  AddBenchFlags(&app, &o);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  app.parse(args);
  return o;
}

TEST(BenchFlags, SweepAndOutputs) {
  const BenchOptions o = Parse({"--url",
                                "http://10.0.0.1:9000",
                                "--model",
                                "mnv3",
                                "--input",
                                "cat.jpg",
                                "--concurrency",
                                "1,2,4,8,16",
                                "--duration",
                                "2.5",
                                "--warmup",
                                "1",
                                "--max-windows",
                                "6",
                                "--json",
                                "o.json",
                                "--csv",
                                "o.csv",
                                "--plot",
                                "c.svg",
                                "--latency-budget-ms",
                                "100",
                                "--budget-percentile",
                                "90",
                                "--no-progress"});
  EXPECT_EQ(o.url, "http://10.0.0.1:9000");
  EXPECT_EQ(o.model, "mnv3");
  EXPECT_EQ(o.concurrency, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(o.rates.empty());
  EXPECT_DOUBLE_EQ(o.duration_s, 2.5);
  EXPECT_DOUBLE_EQ(o.warmup_s, 1);
  EXPECT_EQ(o.max_windows, 6);
  EXPECT_EQ(o.json_path, "o.json");
  EXPECT_EQ(o.csv_path, "o.csv");
  EXPECT_EQ(o.plot_path, "c.svg");
  EXPECT_DOUBLE_EQ(o.latency_budget_ms, 100);
  EXPECT_EQ(o.budget_percentile, 90);
  EXPECT_FALSE(o.progress);
  EXPECT_TRUE(ValidateOptions(o).ok());
}

TEST(BenchFlags, OpenLoopV2Binary) {
  const BenchOptions o =
      Parse({"--model", "m", "--input", "d", "--form", "v2binary", "--header-length", "120",
             "--rate", "50,100", "--arrivals", "poisson", "--version", "3"});
  EXPECT_EQ(o.form, RequestForm::kV2Binary);
  EXPECT_EQ(o.header_length, 120);
  EXPECT_EQ(o.rates, (std::vector<double>{50, 100}));
  EXPECT_EQ(o.arrivals, Arrivals::kPoisson);
  EXPECT_EQ(o.version, "3");
  EXPECT_TRUE(o.progress);
  EXPECT_TRUE(ValidateOptions(o).ok());
}

TEST(BenchFlags, RejectsUnknownForm) {
  EXPECT_THROW(Parse({"--model", "m", "--input", "x", "--form", "grpc"}), CLI::ParseError);
  EXPECT_THROW(Parse({"--input", "x"}), CLI::ParseError);  // --model is required
}

TEST(ValidateOptions, Inconsistencies) {
  BenchOptions o;
  o.model = "m";
  o.input = "x";
  EXPECT_TRUE(ValidateOptions(o).ok());
  BenchOptions both = o;
  both.concurrency = {1};
  both.rates = {10};
  EXPECT_FALSE(ValidateOptions(both).ok());
  BenchOptions zero = o;
  zero.concurrency = {0};
  EXPECT_FALSE(ValidateOptions(zero).ok());
  BenchOptions windows = o;
  windows.max_windows = 2;  // fewer than --windows 3
  EXPECT_FALSE(ValidateOptions(windows).ok());
  BenchOptions header = o;
  header.header_length = 10;  // only for v2binary
  EXPECT_FALSE(ValidateOptions(header).ok());
  BenchOptions pct = o;
  pct.budget_percentile = 75;
  EXPECT_FALSE(ValidateOptions(pct).ok());
  BenchOptions url = o;
  url.url = "https://x";
  EXPECT_FALSE(ValidateOptions(url).ok());
}

}  // namespace
}  // namespace inferd::bench
