// Models files from measured traffic (`inferd plan --from-metrics URL,...`):
// the /metrics of running inferd servers, scraped twice `window` seconds
// apart, give each model's requests per second and CPU per request.
//
// What inferd's /metrics has, and what is derived:
//  - rps: the increase of inferd_requests_total (every label: protocol, code,
//    version) over the window, summed over the servers that serve the model.
//  - core_ms: inferd exports no CPU per request or per model, only the
//    process's CPU (process_cpu_seconds_total). Each server's CPU over the
//    window is shared among its models in proportion to the time their work
//    ran: forward time (inferd_compute_duration_seconds is observed once per
//    request with its whole batch's time, so its sum is divided by the mean
//    batch, inferd_batch_size_sum / _count) plus pre-processing time
//    (inferd_preprocess_duration_seconds); with no such time, by requests.
//    The process's other CPU (HTTP, idle threads) is spread over the models
//    the same way, so core_ms errs high, as a plan should.
//  - memory: there is no per-model resident series; inferd_model_resident_bytes
//    is the sum over the models in memory. A server with one model loaded
//    (inferd_models_loaded == 1) gives that model's memory exactly; otherwise
//    memory comes from a models file (`--models FILE`, e.g. one measured by
//    --profile-store), whose models also stay in the plan when no server
//    reports them (their file figures kept). A model with neither is an error.
//
// Parsing and the arithmetic are pure functions (tests feed them text);
// MeasureTraffic blocks for the window and the fetches.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "plan/model_list.h"

namespace inferd::plan {

// The series of one scrape that the planner reads, per model (label `model`).
struct ServerScrape {
  std::string url;
  std::map<std::string, double> requests;            // inferd_requests_total
  std::map<std::string, double> compute_seconds;     // inferd_compute_duration_seconds_sum
  std::map<std::string, double> preprocess_seconds;  // inferd_preprocess_duration_seconds_sum
  std::map<std::string, double> batch_items;         // inferd_batch_size_sum
  std::map<std::string, double> batches;             // inferd_batch_size_count
  std::map<std::string, bool> models;                // every model named by any series
  double process_cpu_seconds = -1;                   // process_cpu_seconds_total; -1 absent
  double resident_bytes = -1;                        // inferd_model_resident_bytes
  double models_loaded = -1;                         // inferd_models_loaded
};

// Parses Prometheus text exposition. kInvalidArgument naming `url` when it
// holds no inferd series at all (not an inferd /metrics).
StatusOr<ServerScrape> ParseScrape(std::string_view text, const std::string& url);

// One model as measured, with how, for the saved file's comments.
struct MeasuredModel {
  ModelDemand demand;
  std::string how;  // e.g. "2 servers, 120 requests in 10.0 s, CPU share 41%; memory: models.yaml"
};

// From two scrapes of each server (same order), `window_s` apart, and the
// models of `base` (may be empty; `base_file` names it). kInvalidArgument when
// a counter went backwards (a server restarted) or a model's memory is known
// nowhere.
StatusOr<std::vector<MeasuredModel>> MeasureFromScrapes(const std::vector<ServerScrape>& before,
                                                        const std::vector<ServerScrape>& after,
                                                        double window_s,
                                                        const std::vector<ModelDemand>& base,
                                                        const std::string& base_file);

using MetricsFetcher = std::function<StatusOr<std::string>(const std::string& url)>;

// Scrapes every URL, waits `window_s`, scrapes again, and measures.
StatusOr<std::vector<MeasuredModel>> MeasureTraffic(const std::vector<std::string>& urls,
                                                    double window_s, const MetricsFetcher& fetch,
                                                    const std::vector<ModelDemand>& base,
                                                    const std::string& base_file);

// The models file `--models` reads, one line per model with how it was
// measured in a trailing comment.
std::string FormatMeasuredModels(const std::vector<MeasuredModel>& models,
                                 const std::vector<std::string>& urls, double window_s);

}  // namespace inferd::plan
