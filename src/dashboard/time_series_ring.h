// TimeSeriesRing: the last `capacity` samples of one figure, oldest dropped
// first, for the dashboard's sparklines. Values only: the rings of one
// sampler are pushed at the same ticks, so the sampler keeps one ring of
// times for all of them and a younger ring lines up with the newest ticks.
// Memory is fixed at construction (4 bytes a sample). Not thread-safe: the
// owner (Sampler) guards it.
#pragma once

#include <cstddef>
#include <vector>

namespace inferd::dashboard {

class TimeSeriesRing {
 public:
  explicit TimeSeriesRing(size_t capacity);

  // Appends `value`, dropping the oldest sample when full. NaN is kept (a
  // tick with no figure, e.g. a p99 with no request: a gap in the plot).
  void Push(double value);
  size_t size() const { return size_; }
  size_t capacity() const { return values_.size(); }
  bool empty() const { return size_ == 0; }
  // The newest sample; NaN when empty.
  double Latest() const;
  // Oldest first.
  std::vector<float> Values() const;

 private:
  std::vector<float> values_;
  size_t next_ = 0;  // where the next Push writes
  size_t size_ = 0;
};

}  // namespace inferd::dashboard
