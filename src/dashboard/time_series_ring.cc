#include "dashboard/time_series_ring.h"

#include <limits>

namespace inferd::dashboard {

TimeSeriesRing::TimeSeriesRing(size_t capacity) : values_(capacity > 0 ? capacity : 1) {}

void TimeSeriesRing::Push(double value) {
  values_[next_] = static_cast<float>(value);
  next_ = (next_ + 1) % values_.size();
  if (size_ < values_.size()) ++size_;
}

double TimeSeriesRing::Latest() const {
  if (size_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return values_[(next_ + values_.size() - 1) % values_.size()];
}

std::vector<float> TimeSeriesRing::Values() const {
  std::vector<float> out;
  out.reserve(size_);
  const size_t first = (next_ + values_.size() - size_) % values_.size();
  for (size_t i = 0; i < size_; ++i) out.push_back(values_[(first + i) % values_.size()]);
  return out;
}

}  // namespace inferd::dashboard
