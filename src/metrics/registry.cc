#include "metrics/registry.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "metrics/text_format.h"

namespace inferd::metrics {

void Counter::Increment(double v) {
  // Counters only go up; a negative increment is a caller bug and is dropped.
  if (!(v >= 0)) return;
  value_.fetch_add(v, std::memory_order_relaxed);
}

void Gauge::Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  // +Inf is implicit; an explicit one would print a duplicate bucket.
  while (!bounds_.empty() && std::isinf(bounds_.back())) bounds_.pop_back();
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  // Bucket i counts observations in (bounds_[i-1], bounds_[i]]; the last one is +Inf.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

std::vector<double> LatencyBuckets() {
  return {50e-6,  100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
          100e-3, 250e-3, 500e-3, 1,      2.5,  5,      10,   30,    60};
}

std::vector<double> BatchSizeBuckets() { return {1, 2, 4, 8, 16, 32, 64, 128, 256}; }

namespace {

// Finds or creates the series for `labels` in one family's map.
template <typename Map, typename Make>
auto& FindOrAdd(Map& map, const Labels& labels, Make make) {
  auto it = map.find(labels);
  if (it == map.end()) it = map.emplace(labels, make()).first;
  return *it->second;
}

}  // namespace

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  assert(IsValidName(name, true));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) it->second = Family{help, "counter", {}, {}, {}};
  assert(it->second.type == "counter");
  return FindOrAdd(it->second.counters, labels, [] { return std::make_unique<Counter>(); });
}

Gauge& Registry::GetGauge(const std::string& name, const std::string& help, const Labels& labels) {
  assert(IsValidName(name, true));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) it->second = Family{help, "gauge", {}, {}, {}};
  assert(it->second.type == "gauge");
  return FindOrAdd(it->second.gauges, labels, [] { return std::make_unique<Gauge>(); });
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  const Labels& labels, const std::vector<double>& upper_bounds) {
  assert(IsValidName(name, true));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) it->second = Family{help, "histogram", {}, {}, {}};
  assert(it->second.type == "histogram");
  return FindOrAdd(it->second.histograms, labels,
                   [&] { return std::make_unique<Histogram>(upper_bounds); });
}

void Registry::AddCollector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(collectors_mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::RenderPrometheus() const {
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard<std::mutex> lock(collectors_mu_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect();
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, family] : families_) {
    out += "# HELP " + name + " " + EscapeHelp(family.help) + "\n";
    out += "# TYPE " + name + " " + family.type + "\n";
    if (family.type == "counter") {
      for (const auto& [labels, c] : family.counters) {
        out += name + FormatLabels(labels) + " " + FormatValue(c->value()) + "\n";
      }
    } else if (family.type == "gauge") {
      for (const auto& [labels, g] : family.gauges) {
        out += name + FormatLabels(labels) + " " + FormatValue(g->value()) + "\n";
      }
    } else {
      for (const auto& [labels, h] : family.histograms) {
        // _count is the +Inf bucket of the same snapshot, so the two always
        // agree even while other threads observe.
        std::vector<uint64_t> counts = h->CumulativeCounts();
        const auto& bounds = h->upper_bounds();
        for (size_t i = 0; i < counts.size(); ++i) {
          std::string le = i < bounds.size() ? FormatValue(bounds[i]) : "+Inf";
          out += name + "_bucket" + FormatLabels(labels, "le", le) + " " +
                 std::to_string(counts[i]) + "\n";
        }
        out += name + "_sum" + FormatLabels(labels) + " " + FormatValue(h->sum()) + "\n";
        out += name + "_count" + FormatLabels(labels) + " " + std::to_string(counts.back()) + "\n";
      }
    }
  }
  return out;
}

}  // namespace inferd::metrics
