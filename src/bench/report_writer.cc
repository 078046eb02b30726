#include "bench/report_writer.h"

#include <cstdio>
#include <fstream>

#include "bench/percentiles.h"
#include "common/json_writer.h"

namespace inferd::bench {

namespace {

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string JsonString(const std::string& s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

std::string Ms(double v) { return Format("%.3f", v); }

std::string Mode(const BenchOptions& o) { return o.rates.empty() ? "closed" : "open"; }

}  // namespace

std::optional<std::size_t> HighestStepWithinBudget(const std::vector<StepResult>& steps,
                                                   double budget_ms, int percentile) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepResult& s = steps[i];
    if (s.failures > 0 || s.successes == 0) continue;
    if (PercentileOf(s.latency, percentile) > budget_ms) continue;
    if (!best || s.requests_per_s > steps[*best].requests_per_s) best = i;
  }
  return best;
}

std::string FormatTableHeader() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-9s %8s %6s %9s %9s %9s %9s %9s %9s %9s %9s %-6s %s\n", "load",
                "requests", "fail", "avg_ms", "min_ms", "max_ms", "p50_ms", "p90_ms", "p95_ms",
                "p99_ms", "req/s", "stable", "failures");
  return buf;
}

std::string FormatTableRow(const StepResult& s) {
  char buf[512];
  const LatencySummary& l = s.latency;
  std::snprintf(buf, sizeof buf,
                "%-9s %8llu %6llu %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.1f %-6s %s\n",
                s.label.c_str(), static_cast<unsigned long long>(s.requests),
                static_cast<unsigned long long>(s.failures), l.avg_ms, l.min_ms, l.max_ms, l.p50_ms,
                l.p90_ms, l.p95_ms, l.p99_ms, s.requests_per_s, s.stable ? "yes" : "no",
                FormatFailures(s.failures_by_status).c_str());
  std::string out = buf;
  if (s.has_server) {
    std::snprintf(buf, sizeof buf,
                  "          server: %.0f requests in the step (bench sent %llu); per request "
                  "%.0f us in the server, %.0f us of it queued, %.0f us compute; page faults "
                  "per request %.1f minor, %.2f major\n",
                  s.server.requests, static_cast<unsigned long long>(s.sent_total),
                  s.server.request_us, s.server.queue_us, s.server.compute_us,
                  s.server.minor_faults_per_request, s.server.major_faults_per_request);
    out += buf;
  }
  if (s.queued_at_end > 0) {
    out += "          (" + std::to_string(s.queued_at_end) +
           " due requests still waited for a connection when the step ended: the server does "
           "not keep up with this rate)\n";
  }
  return out;
}

std::string FormatBudgetLine(const BenchReport& r) {
  const BenchOptions& o = r.options;
  std::string out = "latency budget: p" + std::to_string(o.budget_percentile) +
                    " <= " + Format("%g", o.latency_budget_ms) + " ms: ";
  if (!r.best_within_budget) return out + "no step met it\n";
  const StepResult& s = r.steps[*r.best_within_budget];
  return out + "highest step " + s.label + " (" + Format("%.1f", s.requests_per_s) + " req/s, p" +
         std::to_string(o.budget_percentile) + " " +
         Format("%.2f", PercentileOf(s.latency, o.budget_percentile)) + " ms)\n";
}

std::string ToJson(const BenchReport& r) {
  const BenchOptions& o = r.options;
  std::string j = "{\n";
  j += "  \"url\": " + JsonString(o.url) + ",\n";
  j += "  \"protocol\": " + JsonString(std::string(ProtocolName(o.protocol))) + ",\n";
  j += "  \"target\": " + JsonString(r.target) + ",\n";
  j += "  \"model\": " + JsonString(o.model) + ",\n";
  j += "  \"version\": " + JsonString(o.version) + ",\n";
  j += "  \"form\": " + JsonString(std::string(RequestFormName(o.form))) + ",\n";
  j += "  \"input\": " + JsonString(o.input) + ",\n";
  j += "  \"mode\": " + JsonString(Mode(o)) + ",\n";
  j += "  \"arrivals\": " + JsonString(std::string(ArrivalsName(o.arrivals))) + ",\n";
  j += "  \"window_s\": " + Format("%g", o.duration_s) + ",\n";
  j += "  \"warmup_s\": " + Format("%g", o.warmup_s) + ",\n";
  j += "  \"percentile_method\": \"nearest-rank\",\n";
  j += "  \"steps\": [";
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepResult& s = r.steps[i];
    const LatencySummary& l = s.latency;
    j += i ? ",\n    {" : "\n    {";
    j += "\"label\": " + JsonString(s.label);
    j += ", \"concurrency\": " + std::to_string(s.concurrency);
    j += ", \"rate\": " + Format("%g", s.rate);
    j += ", \"requests\": " + std::to_string(s.requests);
    j += ", \"successes\": " + std::to_string(s.successes);
    j += ", \"failures\": " + std::to_string(s.failures);
    j += ", \"failures_by_status\": {";
    bool first = true;
    for (const auto& [status, count] : s.failures_by_status) {
      j += (first ? "" : ", ") + JsonString(FailureName(status)) + ": " + std::to_string(count);
      first = false;
    }
    j += "}, \"in_flight_at_end\": " + std::to_string(s.in_flight_at_end);
    j += ", \"queued_at_end\": " + std::to_string(s.queued_at_end);
    j += ", \"sent_total\": " + std::to_string(s.sent_total);
    j += ", \"measured_s\": " + Format("%.3f", s.measured_s);
    j += ", \"requests_per_s\": " + Format("%.3f", s.requests_per_s);
    j += ", \"latency_ms\": {\"avg\": " + Ms(l.avg_ms) + ", \"min\": " + Ms(l.min_ms) +
         ", \"max\": " + Ms(l.max_ms) + ", \"p50\": " + Ms(l.p50_ms) +
         ", \"p90\": " + Ms(l.p90_ms) + ", \"p95\": " + Ms(l.p95_ms) +
         ", \"p99\": " + Ms(l.p99_ms) + "}";
    j += ", \"stable\": " + std::string(s.stable ? "true" : "false");
    j += ", \"windows\": " + std::to_string(s.windows_run);
    if (s.has_server) {
      j += ", \"server\": {\"requests\": " + Format("%.0f", s.server.requests) +
           ", \"request_us\": " + Format("%.1f", s.server.request_us) +
           ", \"queue_us\": " + Format("%.1f", s.server.queue_us) +
           ", \"compute_us\": " + Format("%.1f", s.server.compute_us) +
           ", \"minor_faults_per_request\": " +
           Format("%.2f", s.server.minor_faults_per_request) +
           ", \"major_faults_per_request\": " +
           Format("%.2f", s.server.major_faults_per_request) + "}";
    }
    j += "}";
  }
  j += "\n  ]";
  if (o.latency_budget_ms > 0) {
    j += ",\n  \"latency_budget\": {\"ms\": " + Format("%g", o.latency_budget_ms) +
         ", \"percentile\": " + std::to_string(o.budget_percentile) + ", \"best_step\": " +
         (r.best_within_budget ? JsonString(r.steps[*r.best_within_budget].label) : "null") + "}";
  }
  return j + "\n}\n";
}

std::string ToCsv(const BenchReport& r) {
  std::string c =
      "mode,label,concurrency,rate,requests,successes,failures,failures_by_status,"
      "in_flight_at_end,queued_at_end,sent_total,measured_s,requests_per_s,avg_ms,min_ms,max_ms,"
      "p50_ms,p90_ms,p95_ms,p99_ms,"
      "stable,windows,server_requests,server_request_us,server_queue_us,server_compute_us,"
      "server_minor_faults_per_request,server_major_faults_per_request\n";
  const std::string mode = Mode(r.options);
  for (const StepResult& s : r.steps) {
    const LatencySummary& l = s.latency;
    std::string failures = s.failures_by_status.empty() ? "" : FormatFailures(s.failures_by_status);
    c +=
        mode + "," + s.label + "," + std::to_string(s.concurrency) + "," + Format("%g", s.rate) +
        "," + std::to_string(s.requests) + "," + std::to_string(s.successes) + "," +
        std::to_string(s.failures) + "," + failures + "," + std::to_string(s.in_flight_at_end) +
        "," + std::to_string(s.queued_at_end) + "," + std::to_string(s.sent_total) + "," +
        Format("%.3f", s.measured_s) + "," + Format("%.3f", s.requests_per_s) + "," + Ms(l.avg_ms) +
        "," + Ms(l.min_ms) + "," + Ms(l.max_ms) + "," + Ms(l.p50_ms) + "," + Ms(l.p90_ms) + "," +
        Ms(l.p95_ms) + "," + Ms(l.p99_ms) + "," + (s.stable ? "true" : "false") + "," +
        std::to_string(s.windows_run) + "," +
        (s.has_server
             ? Format("%.0f", s.server.requests) + "," + Format("%.1f", s.server.request_us) + "," +
                   Format("%.1f", s.server.queue_us) + "," + Format("%.1f", s.server.compute_us) +
                   "," + Format("%.2f", s.server.minor_faults_per_request) + "," +
                   Format("%.2f", s.server.major_faults_per_request)
             : std::string(",,,,,")) +
        "\n";
  }
  return c;
}

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Unavailable("cannot write '" + path + "'");
  out << content;
  out.close();
  if (!out) return Unavailable("error while writing '" + path + "'");
  return Status::Ok();
}

}  // namespace inferd::bench
