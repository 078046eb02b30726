#include "scheduler/fair_share.h"

#include <algorithm>
#include <tuple>

namespace inferd::scheduler {

double FairShare::Finish(const Contender& c) {
  return c.start + std::max(c.cost_s, 0.0) / std::max(c.weight, 1);
}

int FairShare::Pick(const std::vector<Contender>& contenders) {
  int best = -1;
  std::tuple<int, double, TimePoint> best_key;
  for (size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    const auto key = std::make_tuple(c.level, Finish(c), c.head_arrival);
    if (best < 0 || key < best_key) {
      best = static_cast<int>(i);
      best_key = key;
    }
  }
  return best;
}

double FairShare::Charge(double start, double seconds, int weight) {
  return start + std::max(seconds, 0.0) / std::max(weight, 1);
}

double FairShare::UpdateCost(double expected, double measured) {
  if (expected <= 0) return measured;
  return 0.7 * expected + 0.3 * measured;
}

}  // namespace inferd::scheduler
