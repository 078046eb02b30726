// Length-aware batching: how a batch of variable-length requests (texts
// padded with pad_value) is cut into sub-batches of similar length.
//
// Padding every request of a batch to its longest wastes the compute of the
// padded tokens: a batch of one 250-token and seven 20-token texts computes
// 2000 tokens for 390 real ones. Running each request alone wastes nothing
// but pays the fixed cost of a forward call per request. The plan between
// the two: sort the requests by length and cut the sorted run into
// contiguous groups so that the sum of the groups' modelled costs is least
// (an exact dynamic programme, O(n^2) for n requests), each group at most
// `max_items` items. Each group is answered as soon as its forward ends; which
// group runs when is the runner's choice (batch_runner.h: the oldest
// request's group now, the others given back to the queue).
//
// The cost model of a forward of `items` sequences padded to `length` tokens:
//   fixed_ms + token_ms * items * length + token2_ms * items * length^2
// (per call, per token, and attention's per-pair term), fitted by least
// squares at load (BatchCalibrator::Calibrate measures a grid of batch sizes
// and lengths) or, uncalibrated, DefaultLengthCost.
//
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/model_config.h"

namespace inferd::scheduler {

// The input whose length cuts a model's batches: the first of a variable dim
// with a pad_value (not BYTES), or -1 when the model's batches are not cut.
int LengthInput(const config::ModelConfig& config);

struct LengthCost {
  double fixed_ms = 0;
  double token_ms = 0;
  double token2_ms = 0;
  // The modelled cost of one forward, in ms.
  double Cost(int64_t items, int64_t length) const;
  // "3.1 ms + 0.012 ms/token + 2e-05 ms/token^2".
  std::string ToString() const;
};

// Uncalibrated: a call costs as much as 32 tokens (so padding up to about 32
// tokens per request is worth a shared call), no quadratic term.
LengthCost DefaultLengthCost();

// One measured forward: `items` sequences of `length` tokens took `ms`.
struct CostPoint {
  int64_t items = 0;
  int64_t length = 0;
  double ms = 0;
};

// The least-squares fit of the three terms over `points`, each coefficient
// >= 0 (the best fit over the subsets of terms whose own fit has no negative
// coefficient). DefaultLengthCost() when there are fewer than 2 points.
LengthCost FitLengthCost(const std::vector<CostPoint>& points);

// Sub-batches of the requests of lengths `lengths[i]` carrying `items[i]`
// items each: groups of request indices, each group ascending by length and
// the groups ascending by length (shortest first). Every index appears once.
// A request whose items alone exceed max_items forms a group of its own.
std::vector<std::vector<size_t>> PlanByLength(const std::vector<int64_t>& lengths,
                                              const std::vector<int>& items,
                                              const LengthCost& cost, int max_items);

// The tokens of one group run padded to its longest: {computed, real}, where
// computed = (sum of items) * longest and real = sum of items[i] * lengths[i].
struct TokenCount {
  int64_t computed = 0;
  int64_t real = 0;
};
TokenCount CountTokens(const std::vector<int64_t>& lengths, const std::vector<int>& items,
                       const std::vector<size_t>& group);

}  // namespace inferd::scheduler
