// Sampler: the dashboard's memory. One light thread reads the metrics
// registry and /proc once a period (default 1 s) and keeps the last
// `capacity` samples (default 300: five minutes) of each figure in
// TimeSeriesRings: per model (requests/s, p99) and for the node (requests/s,
// process CPU, resident memory, loads and evictions per tick, each
// executor's busy share). The page reads them through Model() and Node().
//
// Figures per model come from the series every request already records
// (serving/request_metrics.h, scheduler/model_queue.cc): a model has figures
// while it has series (from its first request until its last version leaves
// memory, when the repository removes them); its rings go with them. p50/p99
// are read from the latency histogram over the last `window` ticks, the way
// Prometheus's histogram_quantile does (bucket interpolation).
//
// Cost: a tick reads a few registry families and, per executor thread, two
// small /proc files; memory is bounded by capacity x (models with series).
// Thread-safety: every method may be called from any thread; the sampling
// thread (run_thread) and readers share mu_.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "dashboard/node_facts.h"
#include "dashboard/time_series_ring.h"
#include "metrics/registry.h"

namespace inferd::dashboard {

class Sampler {
 public:
  struct Options {
    metrics::Registry* metrics = nullptr;  // required
    NodeFacts node;                        // the budget and the executors (busy shares)
    std::chrono::milliseconds period{1000};
    size_t capacity = 300;  // samples per ring
    size_t window = 10;     // ticks that p50/p99 cover
    Clock* clock = Clock::Real();
    bool run_thread = true;  // false: the owner calls SampleNow (tests)
    // Readers of the process; defaults read /proc/self. Tests inject them.
    std::function<double()> process_cpu_seconds;
    std::function<int64_t()> process_resident_bytes;
    std::function<std::map<int, double>()> executor_cpu_seconds;
  };
  // kInvalidArgument without a registry or with a zero period or capacity.
  static StatusOr<std::unique_ptr<Sampler>> Create(Options options);
  ~Sampler();  // stops and joins the thread

  // Takes one sample now (the thread calls it every period).
  void SampleNow() EXCLUDES(mu_);

  struct ModelFigures {
    double requests = 0;  // answered since the model's series started (every status code)
    double errors = 0;    // of those, answered with an error
    double rps = 0;       // over the last tick
    double p50_ms = -1;   // over the window; -1 when no request in it
    double p99_ms = -1;
    double queue_depth = 0;
    uint64_t batches = 0;  // executed since the series started
    double batch_mean = 0;
    std::vector<std::pair<double, uint64_t>> batch_sizes;  // {bucket bound, batches}, non-empty
    std::vector<float> rps_series;                         // oldest first; NaN = no figure
    std::vector<float> p99_series;
  };
  // Nullopt when the model has no series (no request since it was loaded).
  std::optional<ModelFigures> Model(const std::string& name, bool with_series) const EXCLUDES(mu_);

  struct ExecutorFigures {
    ExecutorFacts facts;
    double busy = 0;  // CPU seconds per second per thread over the last tick, 0..1
    std::vector<float> busy_series;
  };
  struct NodeFigures {
    NodeFacts facts;
    double period_s = 1;
    size_t capacity = 0;
    uint64_t ticks = 0;        // samples taken
    double requests = 0;       // every model's, since the first tick (unknown models too)
    double rps = 0;            // over the last tick
    double cpu_cores = 0;      // the process's CPU over the last tick, in cores
    int64_t rss_bytes = 0;     // the process's resident memory
    int64_t budget_bytes = 0;  // --memory-budget (0 = none)
    int64_t model_bytes = 0;   // footprints of the resident models
    double loads = 0;          // successful loads since start
    double load_failures = 0;  // failed or no room
    double evictions = 0;
    double cache_hits = 0;
    double cache_misses = 0;
    std::vector<ExecutorFigures> executors;
    // Oldest first, one value a tick: "rps", "cpu_cores", "rss_bytes",
    // "model_bytes", "loads" and "evictions" (per tick).
    std::map<std::string, std::vector<float>> series;
  };
  NodeFigures Node() const EXCLUDES(mu_);

 private:
  struct ModelRecord;
  explicit Sampler(Options options);
  void Run() EXCLUDES(mu_);

  const Options options_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<ModelRecord>> models_ GUARDED_BY(mu_);
  NodeFigures node_ GUARDED_BY(mu_);
  std::map<std::string, TimeSeriesRing> node_rings_ GUARDED_BY(mu_);
  std::vector<TimeSeriesRing> busy_rings_ GUARDED_BY(mu_);
  std::optional<TimePoint> last_tick_ GUARDED_BY(mu_);
  double last_cpu_seconds_ GUARDED_BY(mu_) = 0;
  std::map<int, double> last_executor_cpu_ GUARDED_BY(mu_);
  double last_unknown_requests_ GUARDED_BY(mu_) = 0;  // model="": unknown models
  double last_loads_ GUARDED_BY(mu_) = 0;
  double last_evictions_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace inferd::dashboard
