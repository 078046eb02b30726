// ServerMetrics: what the server itself says about a load step, read from its
// Prometheus /metrics before and after the step (`--metrics-url`). Gives the
// server-side time per request (request, queue and compute histograms of
// inferd) next to the client's view, the server's own request count, and the
// server process's page faults per request.
//
// Thread-safety: plain data and pure functions, except FetchMetricsText,
// which blocks on one HTTP GET.
#pragma once

#include <string>
#include <string_view>

#include "bench/bench_options.h"
#include "common/status.h"

namespace inferd::bench {

// Sums over the series of one model (label model="m" or model="m:<version>"),
// and the process's page faults (inferd_process_page_faults_total, all models).
struct ServerCounters {
  double requests = 0;       // inferd_requests_total, all codes
  double request_sum_s = 0;  // inferd_request_duration_seconds_sum
  double request_count = 0;  // inferd_request_duration_seconds_count
  double queue_sum_s = 0;    // inferd_queue_duration_seconds_sum
  double queue_count = 0;
  double compute_sum_s = 0;  // inferd_compute_duration_seconds_sum
  double compute_count = 0;
  double minor_faults = 0;  // inferd_process_page_faults_total{kind="minor"}
  double major_faults = 0;
};

// Per-request means over a step: the difference of two scrapes.
struct ServerStepTimes {
  double requests = 0;
  double request_us = 0;  // mean time from body read to response built
  double queue_us = 0;    // mean time queued before compute
  double compute_us = 0;  // mean time of the batch the request ran in
  // Page faults of the whole server process per request of the step (a warm
  // server whose allocator keeps its memory adds none).
  double minor_faults_per_request = 0;
  double major_faults_per_request = 0;
};

// Parses Prometheus text exposition; lines it does not know are ignored.
ServerCounters ParseServerCounters(std::string_view text, const std::string& model);

ServerStepTimes Difference(const ServerCounters& before, const ServerCounters& after);

// GET `url` (http://host:port/path); the body, or an error for a non-200 answer.
StatusOr<std::string> FetchMetricsText(const std::string& url);

}  // namespace inferd::bench
