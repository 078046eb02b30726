// The results of a bench run and their renderings: the stdout table, JSON and
// CSV. (The SVG curve is in svg_plot.h.)
//
// Table columns: load, requests, failures, avg/min/max/p50/p90/p95/p99 latency
// in ms (successes only; percentiles by nearest rank), successful requests/s,
// whether the step met the stability rule, and failures by status.
//
// Thread-safety: plain data and pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "bench/step_result.h"
#include "common/status.h"

namespace inferd::bench {

struct BenchReport {
  BenchOptions options;
  std::string target;  // the request path
  std::vector<StepResult> steps;
  std::optional<std::size_t> best_within_budget;  // index into steps
};

// Among steps with no failures and at least one success whose latency at
// `percentile` is <= budget_ms, the one with the highest throughput.
std::optional<std::size_t> HighestStepWithinBudget(const std::vector<StepResult>& steps,
                                                   double budget_ms, int percentile);

std::string FormatTableHeader();
std::string FormatTableRow(const StepResult& step);
// "latency budget: p99 <= 100 ms: highest step c=8 (123.4 req/s, p99 87.1 ms)" or "none met".
std::string FormatBudgetLine(const BenchReport& report);

std::string ToJson(const BenchReport& report);
std::string ToCsv(const BenchReport& report);

// Writes `content` to `path`, replacing it.
Status WriteTextFile(const std::string& path, const std::string& content);

}  // namespace inferd::bench
