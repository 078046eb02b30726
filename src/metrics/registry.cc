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
auto FindOrAdd(Map& map, const Labels& labels, Make make) {
  auto it = map.find(labels);
  if (it == map.end()) it = map.emplace(labels, make()).first;
  return it->second;
}

// Removes the series of `map` whose `label` is `value`; returns how many.
template <typename Map>
size_t EraseLabelled(Map& map, const std::string& label, const std::string& value) {
  size_t removed = 0;
  for (auto it = map.begin(); it != map.end();) {
    auto found = it->first.find(label);
    if (found != it->first.end() && found->second == value) {
      it = map.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace

Registry::Family& Registry::FamilyLocked(const std::string& name, const std::string& help,
                                         const char* type) {
  assert(IsValidName(name, true));
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) it->second = Family{help, type, {}, {}, {}};
  assert(it->second.type == type);
  return it->second;
}

std::shared_ptr<Counter> Registry::ShareCounter(const std::string& name, const std::string& help,
                                                const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  return FindOrAdd(FamilyLocked(name, help, "counter").counters, labels,
                   [] { return std::make_shared<Counter>(); });
}

std::shared_ptr<Gauge> Registry::ShareGauge(const std::string& name, const std::string& help,
                                            const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  return FindOrAdd(FamilyLocked(name, help, "gauge").gauges, labels,
                   [] { return std::make_shared<Gauge>(); });
}

std::shared_ptr<Histogram> Registry::ShareHistogram(const std::string& name,
                                                    const std::string& help, const Labels& labels,
                                                    const std::vector<double>& upper_bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  return FindOrAdd(FamilyLocked(name, help, "histogram").histograms, labels,
                   [&] { return std::make_shared<Histogram>(upper_bounds); });
}

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  return *ShareCounter(name, help, labels);  // the registry keeps its own reference
}

Gauge& Registry::GetGauge(const std::string& name, const std::string& help, const Labels& labels) {
  return *ShareGauge(name, help, labels);
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  const Labels& labels, const std::vector<double>& upper_bounds) {
  return *ShareHistogram(name, help, labels, upper_bounds);
}

size_t Registry::RemoveSeries(const std::string& label, const std::string& value,
                              const std::vector<std::string>& keep) {
  size_t removed = 0;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = families_.begin(); it != families_.end();) {
    Family& f = it->second;
    if (std::find(keep.begin(), keep.end(), it->first) != keep.end()) {
      ++it;
      continue;
    }
    size_t here = EraseLabelled(f.counters, label, value) + EraseLabelled(f.gauges, label, value) +
                  EraseLabelled(f.histograms, label, value);
    removed += here;
    const bool empty = f.counters.empty() && f.gauges.empty() && f.histograms.empty();
    it = here > 0 && empty ? families_.erase(it) : std::next(it);
  }
  return removed;
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

std::vector<Registry::ScalarReading> Registry::ReadScalars(const std::string& name) const {
  std::vector<ScalarReading> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return out;
  // The atomics are cheap to read: values are read under the lock with the labels.
  for (const auto& [labels, c] : it->second.counters) out.push_back({labels, c->value()});
  for (const auto& [labels, g] : it->second.gauges) out.push_back({labels, g->value()});
  return out;
}

std::vector<Registry::HistogramReading> Registry::ReadHistograms(const std::string& name) const {
  std::vector<std::pair<Labels, std::shared_ptr<Histogram>>> found;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = families_.find(name);
    if (it == families_.end()) return {};
    for (const auto& [labels, h] : it->second.histograms) found.emplace_back(labels, h);
  }
  std::vector<HistogramReading> out;
  out.reserve(found.size());
  for (auto& [labels, h] : found) {
    out.push_back({std::move(labels), h->upper_bounds(), h->CumulativeCounts(), h->sum()});
  }
  return out;
}

}  // namespace inferd::metrics
