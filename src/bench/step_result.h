// Samples and what a load step reports from them.
//
// A Sample is one finished request: when it finished, its latency (from the
// intended send time in open loop, from the actual send in closed loop) and
// its outcome. A StepResult summarises the samples of a step's measured
// windows. Only 2xx responses count as successes: their latencies make the
// percentiles and their count makes the throughput, so a server that answers
// errors quickly shows up as failures, never as a fast server.
//
// Thread-safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "bench/percentiles.h"
#include "bench/server_metrics.h"
#include "bench/stability_rule.h"
#include "common/clock.h"

namespace inferd::bench {

// Outcomes that are not HTTP statuses.
inline constexpr int kConnectionError = 0;  // connect, write or read failed
inline constexpr int kTimeout = -1;         // no full response within --timeout

struct Sample {
  TimePoint done;
  double latency_ms = 0;
  int status = 0;  // HTTP status, kConnectionError or kTimeout
};

inline bool IsSuccess(int status) { return status >= 200 && status < 300; }

// "503", "conn" or "timeout".
std::string FailureName(int status);

struct StepResult {
  std::string label;           // "c=4" or "r=100"
  int concurrency = 0;         // closed loop step, else 0
  double rate = 0;             // open loop step (requests/s), else 0
  std::uint64_t requests = 0;  // finished in the measured windows (successes + failures)
  std::uint64_t successes = 0;
  std::uint64_t failures = 0;
  std::map<int, std::uint64_t> failures_by_status;  // key: HTTP status, kConnectionError, kTimeout
  std::uint64_t in_flight_at_end = 0;               // sent, unanswered when measurement ended
  std::uint64_t queued_at_end = 0;  // open loop: due, still waiting for a connection
  std::uint64_t sent_total = 0;     // all requests written in the step, warm-up and drain included
  double measured_s = 0;
  double requests_per_s = 0;  // successes / measured_s
  LatencySummary latency;     // over successes only
  bool stable = false;
  int windows_run = 0;      // windows measured before the step ended
  bool has_server = false;  // --metrics-url given: `server` holds the server's view
  ServerStepTimes server;   // over the whole step, warm-up and drain included
};

// Throughput and median of one window of `seconds`.
WindowStats WindowStatsOf(std::span<const Sample> window, double seconds);

// Fills the counts, throughput and latency fields of `step` from the samples of
// its reported windows, which lasted `seconds` in all. Other fields untouched.
void SummarizeSamples(std::span<const Sample> samples, double seconds, StepResult* step);

// "503:2 conn:1", or "-" when there were none.
std::string FormatFailures(const std::map<int, std::uint64_t>& failures);

}  // namespace inferd::bench
