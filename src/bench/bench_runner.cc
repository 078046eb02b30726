#include "bench/bench_runner.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bench/load_generator.h"
#include "bench/request_set.h"
#include "bench/server_metrics.h"
#include "bench/stability_rule.h"
#include "bench/svg_plot.h"
#include "bench/windowed_measurement.h"

namespace inferd::bench {

namespace {

using Steady = std::chrono::steady_clock;

std::chrono::nanoseconds Seconds(double s) {
  return std::chrono::nanoseconds(static_cast<std::int64_t>(s * 1e9));
}

std::string Label(const LoadPlan& plan) {
  if (plan.concurrency > 0) return "c=" + std::to_string(plan.concurrency);
  char buf[32];
  std::snprintf(buf, sizeof buf, "r=%g", plan.rate);
  return buf;
}

StatusOr<StepResult> RunStep(const BenchOptions& o, const ParsedUrl& url,
                             const RequestSet& requests, const LoadPlan& plan,
                             std::ostream& progress) {
  ASSIGN_OR_RETURN(std::unique_ptr<LoadGenerator> gen, LoadGenerator::Create(url, &requests, plan));
  const StabilityRule rule{o.windows, o.stability_pct / 100.0};
  StepResult step;
  step.label = Label(plan);
  step.concurrency = plan.concurrency;
  step.rate = plan.rate;

  ServerCounters server_before;
  if (!o.metrics_url.empty()) {
    ASSIGN_OR_RETURN(std::string text, FetchMetricsText(o.metrics_url));
    server_before = ParseServerCounters(text, o.model);
  }
  gen->Start();
  WindowedMeasurement measurement(Steady::now() + Seconds(o.warmup_s), Seconds(o.duration_s), rule,
                                  o.max_windows);
  for (bool done = false; !done;) {
    gen->RunUntil(measurement.NextWindowEnd());
    done = measurement.CloseWindow(gen->samples());
    if (o.progress) {
      const LoadCounters c = gen->counters();
      const WindowStats& w = measurement.history().back();
      char line[256];
      std::snprintf(
          line, sizeof line,
          "[bench] %s window %d/%d: %.1f req/s, p50 %.2f ms, in flight %llu, "
          "queued %llu, sent %llu%s\n",
          step.label.c_str(), measurement.windows_run(), o.max_windows, w.requests_per_s, w.p50_ms,
          static_cast<unsigned long long>(c.in_flight), static_cast<unsigned long long>(c.queued),
          static_cast<unsigned long long>(c.sent), measurement.stable() ? " (stable)" : "");
      progress << line << std::flush;
    }
  }
  const LoadCounters at_end = gen->counters();
  step.in_flight_at_end = at_end.in_flight;
  step.queued_at_end = at_end.queued;
  gen->Stop(Steady::now() + Seconds(o.timeout_s));
  step.sent_total = gen->counters().sent;
  measurement.Summarize(gen->samples(), &step);
  if (!o.metrics_url.empty()) {
    ASSIGN_OR_RETURN(std::string text, FetchMetricsText(o.metrics_url));
    step.has_server = true;
    step.server = Difference(server_before, ParseServerCounters(text, o.model));
  }
  return step;
}

}  // namespace

StatusOr<BenchReport> RunSweep(const BenchOptions& o, std::ostream& table, std::ostream& progress) {
  RETURN_IF_ERROR(ValidateOptions(o));
  ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(o.url));
  ASSIGN_OR_RETURN(RequestSet requests, RequestSet::Build(o));

  std::vector<LoadPlan> plans;
  LoadPlan base;
  base.arrivals = o.arrivals;
  base.seed = o.seed;
  base.max_connections = o.max_connections;
  base.protocol = o.protocol;
  base.timeout = Seconds(o.timeout_s);
  for (int c : o.concurrency) {
    plans.push_back(base);
    plans.back().concurrency = c;
  }
  for (double r : o.rates) {
    plans.push_back(base);
    plans.back().rate = r;
  }
  if (plans.empty()) {
    plans.push_back(base);
    plans.back().concurrency = 1;
  }

  BenchReport report;
  report.options = o;
  report.target = requests.target();
  table << "inferd bench: " << (o.protocol == Protocol::kGrpc ? "gRPC " : "POST ") << o.url
        << report.target << " (" << RequestFormName(o.form) << ", " << requests.size()
        << " input file" << (requests.size() == 1 ? "" : "s") << "), windows of " << o.duration_s
        << " s after " << o.warmup_s << " s warm-up\n"
        << FormatTableHeader() << std::flush;
  for (const LoadPlan& plan : plans) {
    ASSIGN_OR_RETURN(StepResult step, RunStep(o, url, requests, plan, progress));
    table << FormatTableRow(step) << std::flush;
    report.steps.push_back(std::move(step));
  }
  if (o.latency_budget_ms > 0) {
    report.best_within_budget =
        HighestStepWithinBudget(report.steps, o.latency_budget_ms, o.budget_percentile);
    table << FormatBudgetLine(report);
  }
  return report;
}

int RunBench(const BenchOptions& options) {
  StatusOr<BenchReport> report = RunSweep(options, std::cout, std::cerr);
  if (!report.ok()) {
    std::cerr << "inferd bench: " << report.status().ToString() << "\n";
    return 2;
  }
  Status written = Status::Ok();
  if (!options.json_path.empty()) {
    Status s = WriteTextFile(options.json_path, ToJson(*report));
    if (!s.ok()) written = s;
  }
  if (!options.csv_path.empty()) {
    Status s = WriteTextFile(options.csv_path, ToCsv(*report));
    if (!s.ok()) written = s;
  }
  if (!options.plot_path.empty()) {
    PlotOptions plot;
    plot.title =
        "inferd bench: " + options.model + " (" + std::string(RequestFormName(options.form)) + ")";
    plot.budget_ms = options.latency_budget_ms;
    plot.budget_percentile = options.budget_percentile;
    Status s = WriteTextFile(options.plot_path, RenderCurveSvg(report->steps, plot));
    if (!s.ok()) written = s;
  }
  if (!written.ok()) {
    std::cerr << "inferd bench: " << written.ToString() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace inferd::bench
