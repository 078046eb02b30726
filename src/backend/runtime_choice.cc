#include "backend/runtime_choice.h"

#include <algorithm>
#include <cstdio>

namespace inferd::backend {
namespace {

std::string Ratio(double reference, double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", reference / std::max(ms, 1e-9));
  return buf;
}

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

}  // namespace

int ServedBatch(const config::ModelConfig& config, int calibrated) {
  const int max = std::max(1, config.max_batch_size);
  if (calibrated > 0) return std::min(calibrated, max);
  const auto& preferred = config.dynamic_batching.preferred_batch_sizes;
  if (!preferred.empty()) {
    return std::clamp(*std::max_element(preferred.begin(), preferred.end()), 1, max);
  }
  return max;
}

double ServedCost(const CandidateTiming& c, int served_batch) {
  if (served_batch <= 1) return c.ms_alone;
  return (c.ms_alone + c.ms_per_item) / 2;
}

RuntimeChoice ChooseRuntime(const std::vector<CandidateTiming>& candidates, int served_batch) {
  RuntimeChoice choice;
  choice.ms_served.assign(candidates.size(), 0);
  choice.verdicts.assign(candidates.size(), "");
  if (candidates.empty()) return choice;
  const CandidateTiming& ref = candidates.front();
  const double ref_cost = ServedCost(ref, served_batch);
  const bool batches = served_batch > 1;
  // "1.29x torch fp32's speed on the served sizes (1.59x per item at batch 8, 1.05x alone)"
  const auto versus = [&](const CandidateTiming& c, double cost) {
    std::string s = Ratio(ref_cost, cost) + " " + ref.label + "'s speed on the served sizes";
    if (batches) {
      s += " (" + Ratio(ref.ms_per_item, c.ms_per_item) + " per item at batch " +
           std::to_string(served_batch) + ", " + Ratio(ref.ms_alone, c.ms_alone) + " alone)";
    } else {
      s += " (alone: the model does not batch)";
    }
    return s;
  };

  std::vector<std::string> ineligible(candidates.size());
  size_t best = 0;
  double best_cost = ref_cost;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const CandidateTiming& c = candidates[i];
    if (!c.kept && i > 0) continue;
    choice.ms_served[i] = ServedCost(c, served_batch);
    if (i == 0) continue;
    if (!c.not_servable.empty()) {
      ineligible[i] = c.not_servable;
    } else if (c.ms_alone > ref.ms_alone * (1 + kMaxLoss)) {
      ineligible[i] = "alone it is more than " + Percent(kMaxLoss) + " slower than " + ref.label;
    } else if (batches && c.ms_per_item > ref.ms_per_item * (1 + kMaxLoss)) {
      ineligible[i] = "at batch " + std::to_string(served_batch) + " it is more than " +
                      Percent(kMaxLoss) + " slower per item than " + ref.label;
    } else if (choice.ms_served[i] <= ref_cost * (1 - kMinSaving) &&
               choice.ms_served[i] < best_cost) {
      best = i;
      best_cost = choice.ms_served[i];
    }
  }
  choice.chosen = best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].kept && i > 0) continue;
    if (i == best) {
      choice.verdicts[i] = i == 0 ? "chosen: no eligible candidate saves " + Percent(kMinSaving) +
                                        " of its time on the served sizes"
                                  : "chosen: " + versus(candidates[i], choice.ms_served[i]);
    } else if (i == 0) {
      choice.verdicts[i] = "the reference";
    } else {
      choice.verdicts[i] = "accepted, not chosen: " + versus(candidates[i], choice.ms_served[i]);
      if (!ineligible[i].empty()) choice.verdicts[i] += "; " + ineligible[i];
    }
  }
  return choice;
}

}  // namespace inferd::backend
