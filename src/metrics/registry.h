// Registry: counters, gauges and histograms with labels, rendered in the
// Prometheus text exposition format (version 0.0.4).
//
// Get* returns a reference that stays valid for the registry's lifetime unless
// RemoveSeries removes that series; look a series up once and keep the
// reference on hot paths. A series that may be removed (one labelled with a
// model, which goes when the model is unloaded) is held through the Share*
// variants instead: the shared_ptr keeps it alive, unrendered, after its
// removal. Updates are lock-free (atomics); Get*, Share*, RemoveSeries and
// Render take a mutex. All methods are thread-safe.
// Names must be valid Prometheus names; a name keeps the type it was first
// registered with (asking for it as another type is a programming error: debug
// builds assert, release builds return a series that is never rendered).
// Label values may hold any text: rendering escapes them.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace inferd::metrics {

using Labels = std::map<std::string, std::string>;

class Counter {
 public:
  void Increment(double v = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // Bounds are sorted and deduplicated; +Inf is implicit.
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);
  const std::vector<double>& upper_bounds() const { return bounds_; }
  // Cumulative counts per bound, then +Inf; sum; count.
  std::vector<uint64_t> CumulativeCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // one per bound, plus +Inf
  std::atomic<double> sum_{0};
  std::atomic<uint64_t> count_{0};
};

// Latency buckets in seconds, 50 us .. 60 s.
std::vector<double> LatencyBuckets();
// Batch size buckets 1, 2, 4, ... 256.
std::vector<double> BatchSizeBuckets();

class Registry {
 public:
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& GetHistogram(const std::string& name, const std::string& help, const Labels& labels,
                          const std::vector<double>& upper_bounds);
  // The same series as Get*, shared: valid after RemoveSeries (then no longer
  // rendered; a later Get* or Share* with the same labels makes a new one, from 0).
  std::shared_ptr<Counter> ShareCounter(const std::string& name, const std::string& help,
                                        const Labels& labels = {});
  std::shared_ptr<Gauge> ShareGauge(const std::string& name, const std::string& help,
                                    const Labels& labels = {});
  std::shared_ptr<Histogram> ShareHistogram(const std::string& name, const std::string& help,
                                            const Labels& labels,
                                            const std::vector<double>& upper_bounds);
  // Removes, from every family except those named in `keep`, each series
  // whose label `label` has the value `value`; a family left without series
  // goes too (no HELP/TYPE lines). Returns how many series were removed.
  //
  // Prometheus semantics: a removed series is absent from the next scrapes
  // (Prometheus marks it stale); if it is created again, a counter or
  // histogram starts again from 0, which Prometheus reads as a counter reset
  // (rate() and increase() account for it), and a gauge reads 0 until set.
  // The model repository uses it for a model's series once no version of the
  // model is in memory any more (see repository/internal/cache_metrics.h).
  size_t RemoveSeries(const std::string& label, const std::string& value,
                      const std::vector<std::string>& keep = {});
  // Runs `collect` at the start of every RenderPrometheus, before the series
  // are read: for figures sampled on scrape (process CPU, memory, faults). It
  // may call Get* and update series; it may run on several scraping threads
  // at once.
  void AddCollector(std::function<void()> collect);
  std::string RenderPrometheus() const;

  // Reading series back (the dashboard samples them): every series of the
  // family `name`, with its labels; values are read after the mutex is
  // released. Empty when there is no such family or it has another type.
  // Collectors are not run.
  struct ScalarReading {
    Labels labels;
    double value = 0;
  };
  std::vector<ScalarReading> ReadScalars(const std::string& name) const;  // counter or gauge
  struct HistogramReading {
    Labels labels;
    std::vector<double> upper_bounds;  // +Inf implicit
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
  };
  std::vector<HistogramReading> ReadHistograms(const std::string& name) const;

 private:
  struct Family {
    std::string help;
    std::string type;  // counter | gauge | histogram
    std::map<Labels, std::shared_ptr<Counter>> counters;
    std::map<Labels, std::shared_ptr<Gauge>> gauges;
    std::map<Labels, std::shared_ptr<Histogram>> histograms;
  };
  // The family `name`, made with `help` and `type` if new; mu_ held.
  Family& FamilyLocked(const std::string& name, const std::string& help, const char* type);
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;  // guarded by mu_
  mutable std::mutex collectors_mu_;
  std::vector<std::function<void()>> collectors_;  // guarded by collectors_mu_
};

}  // namespace inferd::metrics
