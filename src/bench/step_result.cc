#include "bench/step_result.h"

#include <algorithm>
#include <vector>

namespace inferd::bench {

std::string FailureName(int status) {
  if (status == kConnectionError) return "conn";
  if (status == kTimeout) return "timeout";
  return std::to_string(status);
}

WindowStats WindowStatsOf(std::span<const Sample> window, double seconds) {
  std::vector<double> latencies;
  for (const Sample& s : window) {
    if (IsSuccess(s.status)) latencies.push_back(s.latency_ms);
  }
  WindowStats out;
  out.requests_per_s = seconds > 0 ? static_cast<double>(latencies.size()) / seconds : 0;
  std::sort(latencies.begin(), latencies.end());
  out.p50_ms = NearestRankPercentile(latencies, 50);
  return out;
}

void SummarizeSamples(std::span<const Sample> samples, double seconds, StepResult* step) {
  std::vector<double> latencies;
  latencies.reserve(samples.size());
  step->requests = samples.size();
  step->successes = step->failures = 0;
  step->failures_by_status.clear();
  for (const Sample& s : samples) {
    if (IsSuccess(s.status)) {
      latencies.push_back(s.latency_ms);
    } else {
      ++step->failures_by_status[s.status];
    }
  }
  step->successes = latencies.size();
  step->failures = step->requests - step->successes;
  step->measured_s = seconds;
  step->requests_per_s = seconds > 0 ? static_cast<double>(step->successes) / seconds : 0;
  step->latency = Summarize(std::move(latencies));
}

std::string FormatFailures(const std::map<int, std::uint64_t>& failures) {
  if (failures.empty()) return "-";
  std::string out;
  for (const auto& [status, count] : failures) {
    if (!out.empty()) out += ' ';
    out += FailureName(status) + ":" + std::to_string(count);
  }
  return out;
}

}  // namespace inferd::bench
