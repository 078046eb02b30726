#include "common/clock.h"

namespace inferd {
namespace {

class SteadyClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

Clock* Clock::Real() {
  static SteadyClock clock;
  return &clock;
}

}  // namespace inferd
