#include "dashboard/sampler.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <limits>

#include "dashboard/histogram_quantile.h"
#include "dashboard/thread_cpu.h"
#include "metrics/process_metrics.h"

namespace inferd::dashboard {

// Named, not anonymous: Sampler::ModelRecord (a class with linkage) holds one.
namespace sampler_internal {

// Sums the histograms of one model's series (versions) bucket by bucket.
struct MergedHistogram {
  std::vector<double> bounds;
  std::vector<uint64_t> cumulative;
  double sum = 0;
  void Add(const metrics::Registry::HistogramReading& h) {
    if (cumulative.empty()) {
      bounds = h.upper_bounds;
      cumulative.assign(h.cumulative.size(), 0);
    }
    if (h.cumulative.size() != cumulative.size()) return;
    for (size_t i = 0; i < cumulative.size(); ++i) cumulative[i] += h.cumulative[i];
    sum += h.sum;
  }
};

// What one tick read of a model, before the lock.
struct ModelReading {
  double requests = 0;
  double errors = 0;
  double queue_depth = 0;
  MergedHistogram latency;  // seconds
  MergedHistogram batch;
};

}  // namespace sampler_internal
using sampler_internal::ModelReading;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::string& LabelOf(const metrics::Labels& labels, const std::string& key) {
  static const std::string kEmpty;
  auto it = labels.find(key);
  return it == labels.end() ? kEmpty : it->second;
}

double SumOf(const std::vector<metrics::Registry::ScalarReading>& series,
             const std::string& label = "", const std::string& value = "") {
  double total = 0;
  for (const auto& s : series) {
    if (label.empty() || LabelOf(s.labels, label) == value) total += s.value;
  }
  return total;
}

double DefaultProcessCpuSeconds() { return ProcessCpuSeconds("/proc/self"); }

int64_t DefaultResidentBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// What a counter added since `before`; one that went back (its series was
// made again) counts from 0.
double Since(double now, double before) { return now >= before ? now - before : now; }

// Rate over a tick; NaN on the first one (no interval yet).
double Rate(double now, double before, double seconds) {
  if (!(seconds > 0)) return kNaN;
  return Since(now, before) / seconds;
}

}  // namespace

struct Sampler::ModelRecord {
  explicit ModelRecord(size_t capacity) : rps(capacity), p99_ms(capacity) {}
  TimeSeriesRing rps;
  TimeSeriesRing p99_ms;
  ModelReading last;
  std::vector<double> latency_bounds;
  std::deque<std::vector<uint64_t>> latency_history;  // cumulative, one per tick, window + 1
  double p50_window_ms = -1;
  double p99_window_ms = -1;
};

StatusOr<std::unique_ptr<Sampler>> Sampler::Create(Options options) {
  if (!options.metrics) return InvalidArgument("dashboard sampler: no metrics registry");
  if (options.period.count() <= 0 || options.capacity == 0 || options.window == 0) {
    return InvalidArgument("dashboard sampler: period, capacity and window must be positive");
  }
  if (!options.process_cpu_seconds) options.process_cpu_seconds = DefaultProcessCpuSeconds;
  if (!options.process_resident_bytes) options.process_resident_bytes = DefaultResidentBytes;
  if (!options.executor_cpu_seconds) {
    options.executor_cpu_seconds = [] { return ExecutorCpuSeconds("/proc/self"); };
  }
  const bool run = options.run_thread;
  std::unique_ptr<Sampler> sampler(new Sampler(std::move(options)));
  if (run) sampler->thread_ = std::thread([s = sampler.get()] { s->Run(); });
  return sampler;
}

Sampler::Sampler(Options options) : options_(std::move(options)) {
  MutexLock lock(&mu_);
  node_.facts = options_.node;
  node_.period_s = std::chrono::duration<double>(options_.period).count();
  node_.capacity = options_.capacity;
  for (const char* name : {"rps", "cpu_cores", "rss_bytes", "model_bytes", "loads", "evictions"}) {
    node_rings_.emplace(name, TimeSeriesRing(options_.capacity));
  }
  for (const auto& e : options_.node.executors) {
    node_.executors.push_back({e, 0, {}});
    busy_rings_.emplace_back(options_.capacity);
  }
}

Sampler::~Sampler() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void Sampler::Run() {
  pthread_setname_np(pthread_self(), "inferd-dash");
  MutexLock lock(&mu_);
  while (!stopping_) {
    lock.Unlock();
    SampleNow();
    lock.Lock();
    // Spurious wake-ups only make an early tick; rates divide by the real time.
    if (!stopping_) wake_.WaitFor(&mu_, options_.period);
  }
}

void Sampler::SampleNow() {
  metrics::Registry& r = *options_.metrics;
  // Read everything first, without the lock: readers of the page never wait
  // for the registry or /proc.
  std::map<std::string, ModelReading> readings;
  const auto requests = r.ReadScalars("inferd_requests_total");
  for (const auto& s : requests) {
    ModelReading& m = readings[LabelOf(s.labels, "model")];
    m.requests += s.value;
    if (LabelOf(s.labels, "code") != "OK") m.errors += s.value;
  }
  for (const auto& s : r.ReadScalars("inferd_queue_depth")) {
    readings[LabelOf(s.labels, "model")].queue_depth += s.value;
  }
  for (const auto& h : r.ReadHistograms("inferd_request_duration_seconds")) {
    readings[LabelOf(h.labels, "model")].latency.Add(h);
  }
  for (const auto& h : r.ReadHistograms("inferd_batch_size")) {
    readings[LabelOf(h.labels, "model")].batch.Add(h);
  }
  const auto loads = r.ReadScalars("inferd_model_loads_total");
  const double evictions = SumOf(r.ReadScalars("inferd_model_evictions_total"));
  const auto cache = r.ReadScalars("inferd_model_cache_requests_total");
  const double budget = SumOf(r.ReadScalars("inferd_model_memory_budget_bytes"));
  const double model_bytes = SumOf(r.ReadScalars("inferd_model_resident_bytes"));
  const double cpu_seconds = options_.process_cpu_seconds();
  const int64_t rss = options_.process_resident_bytes();
  const std::map<int, double> executor_cpu = options_.executor_cpu_seconds();
  const TimePoint now = options_.clock->Now();

  MutexLock lock(&mu_);
  const double dt = last_tick_ ? std::chrono::duration<double>(now - *last_tick_).count() : kNaN;
  // Requests answered since the last tick, over every model: a model whose
  // series were removed (it left memory) adds nothing, a new one all it has.
  double answered = 0;
  for (auto it = models_.begin(); it != models_.end();) {
    if (!readings.count(it->first)) {
      it = models_.erase(it);  // its series are gone: it left memory
    } else {
      ++it;
    }
  }
  for (auto& [name, reading] : readings) {
    if (name.empty()) {  // requests for unknown models: the node's figures only
      answered += Since(reading.requests, last_unknown_requests_);
      last_unknown_requests_ = reading.requests;
      continue;
    }
    auto& slot = models_[name];
    const bool fresh = !slot;
    if (fresh) slot = std::make_unique<ModelRecord>(options_.capacity);
    ModelRecord& m = *slot;
    const double since = Since(reading.requests, fresh ? 0 : m.last.requests);
    answered += since;
    m.rps.Push(since / dt);
    const auto& lat = reading.latency.cumulative;
    if (!lat.empty()) {
      if (m.latency_bounds != reading.latency.bounds) {
        m.latency_bounds = reading.latency.bounds;
        m.latency_history.clear();
      }
      if (m.latency_history.empty())
        m.latency_history.push_back(std::vector<uint64_t>(lat.size(), 0));
      const std::vector<uint64_t> tick = CountsBetween(m.latency_history.back(), lat);
      m.latency_history.push_back(lat);
      while (m.latency_history.size() > options_.window + 1) m.latency_history.pop_front();
      const std::vector<uint64_t> window = CountsBetween(m.latency_history.front(), lat);
      const double p99_tick = HistogramQuantile(0.99, m.latency_bounds, tick) * 1e3;
      m.p99_ms.Push(p99_tick);
      const double p50 = HistogramQuantile(0.5, m.latency_bounds, window);
      const double p99 = HistogramQuantile(0.99, m.latency_bounds, window);
      m.p50_window_ms = std::isnan(p50) ? -1 : p50 * 1e3;
      m.p99_window_ms = std::isnan(p99) ? -1 : p99 * 1e3;
    } else {
      m.p99_ms.Push(kNaN);
    }
    m.last = std::move(reading);
  }
  node_.rps = answered / dt;  // NaN on the first tick
  node_.requests += answered;
  node_.cpu_cores = Rate(cpu_seconds, last_cpu_seconds_, dt);
  last_cpu_seconds_ = cpu_seconds;
  node_.rss_bytes = rss;
  node_.budget_bytes = static_cast<int64_t>(budget);
  node_.model_bytes = static_cast<int64_t>(model_bytes);
  node_.loads = SumOf(loads, "outcome", "ok");
  node_.load_failures = SumOf(loads) - node_.loads;
  node_.evictions = evictions;
  node_.cache_hits = SumOf(cache, "result", "hit");
  node_.cache_misses = SumOf(cache, "result", "miss");
  const double loads_tick = last_tick_ ? node_.loads - last_loads_ : 0;
  const double evictions_tick = last_tick_ ? evictions - last_evictions_ : 0;
  last_loads_ = node_.loads;
  last_evictions_ = evictions;
  node_rings_.at("rps").Push(node_.rps);
  node_rings_.at("cpu_cores").Push(node_.cpu_cores);
  node_rings_.at("rss_bytes").Push(static_cast<double>(rss));
  node_rings_.at("model_bytes").Push(model_bytes);
  node_rings_.at("loads").Push(loads_tick);
  node_rings_.at("evictions").Push(evictions_tick);
  for (size_t i = 0; i < node_.executors.size(); ++i) {
    ExecutorFigures& e = node_.executors[i];
    auto it = executor_cpu.find(e.facts.id);
    const double used = it == executor_cpu.end() ? 0 : it->second;
    auto before = last_executor_cpu_.find(e.facts.id);
    const double threads = std::max(1, e.facts.num_threads);
    double share =
        before == last_executor_cpu_.end() ? kNaN : Rate(used, before->second, dt) / threads;
    if (!std::isnan(share)) share = std::clamp(share, 0.0, 1.0);
    e.busy = std::isnan(share) ? 0 : share;
    busy_rings_[i].Push(share);
  }
  last_executor_cpu_ = executor_cpu;
  last_tick_ = now;
  ++node_.ticks;
}

std::optional<Sampler::ModelFigures> Sampler::Model(const std::string& name,
                                                    bool with_series) const {
  MutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return std::nullopt;
  const ModelRecord& m = *it->second;
  ModelFigures f;
  f.requests = m.last.requests;
  f.errors = m.last.errors;
  const double rps = m.rps.Latest();
  f.rps = std::isnan(rps) ? 0 : rps;
  f.p50_ms = m.p50_window_ms;
  f.p99_ms = m.p99_window_ms;
  f.queue_depth = m.last.queue_depth;
  const auto& batch = m.last.batch;
  if (!batch.cumulative.empty()) {
    f.batches = batch.cumulative.back();
    f.batch_mean = f.batches > 0 ? batch.sum / static_cast<double>(f.batches) : 0;
    uint64_t below = 0;
    for (size_t i = 0; i < batch.cumulative.size(); ++i) {
      const uint64_t here = batch.cumulative[i] - below;
      below = batch.cumulative[i];
      if (here == 0) continue;
      const double bound =
          i < batch.bounds.size() ? batch.bounds[i] : std::numeric_limits<double>::infinity();
      f.batch_sizes.emplace_back(bound, here);
    }
  }
  if (with_series) {
    f.rps_series = m.rps.Values();
    f.p99_series = m.p99_ms.Values();
  }
  return f;
}

Sampler::NodeFigures Sampler::Node() const {
  MutexLock lock(&mu_);
  NodeFigures n = node_;
  for (const auto& [name, ring] : node_rings_) n.series[name] = ring.Values();
  for (size_t i = 0; i < n.executors.size(); ++i) {
    n.executors[i].busy_series = busy_rings_[i].Values();
  }
  return n;
}

}  // namespace inferd::dashboard
