#include "scheduler/length_buckets.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace inferd::scheduler {

double LengthCost::Cost(int64_t items, int64_t length) const {
  const double tokens = static_cast<double>(items) * static_cast<double>(length);
  return fixed_ms + token_ms * tokens + token2_ms * tokens * static_cast<double>(length);
}

std::string LengthCost::ToString() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.3g ms + %.3g ms/token + %.3g ms/token^2", fixed_ms, token_ms,
                token2_ms);
  return buf;
}

LengthCost DefaultLengthCost() { return {32.0, 1.0, 0.0}; }

int LengthInput(const config::ModelConfig& config) {
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const config::TensorSpec& spec = config.inputs[i];
    if (!spec.pad_value || spec.dtype == DataType::kBytes) continue;
    if (std::find(spec.dims.begin(), spec.dims.end(), -1) != spec.dims.end()) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

namespace {

// Solves the k x k system a * x = b (Gaussian elimination with partial
// pivoting); false when it is singular.
template <size_t N>
bool Solve(std::array<std::array<double, N>, N> a, std::array<double, N> b, size_t k,
           std::array<double, N>* x) {
  for (size_t c = 0; c < k; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < k; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    }
    if (std::fabs(a[p][c]) < 1e-300) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t r = c + 1; r < k; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t j = c; j < k; ++j) a[r][j] -= f * a[c][j];
      b[r] -= f * b[c];
    }
  }
  for (size_t c = k; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < k; ++j) s -= a[c][j] * (*x)[j];
    (*x)[c] = s / a[c][c];
  }
  return true;
}

}  // namespace

LengthCost FitLengthCost(const std::vector<CostPoint>& points) {
  if (points.size() < 2) return DefaultLengthCost();
  // The terms, scaled so that the normal equations stay well conditioned.
  auto term = [](const CostPoint& p, int t) {
    const double tokens = static_cast<double>(p.items) * static_cast<double>(p.length);
    return t == 0 ? 1.0 : t == 1 ? tokens : tokens * static_cast<double>(p.length);
  };
  std::array<double, 3> scale{1, 1, 1};
  for (int t = 0; t < 3; ++t) {
    for (const CostPoint& p : points) scale[t] = std::max(scale[t], term(p, t));
  }
  LengthCost best = DefaultLengthCost();
  double best_error = std::numeric_limits<double>::infinity();
  for (int mask = 1; mask < 8; ++mask) {
    std::array<int, 3> used{};
    size_t k = 0;
    for (int t = 0; t < 3; ++t) {
      if (mask & (1 << t)) used[k++] = t;
    }
    if (k > points.size()) continue;
    std::array<std::array<double, 3>, 3> a{};
    std::array<double, 3> b{}, x{};
    for (const CostPoint& p : points) {
      for (size_t i = 0; i < k; ++i) {
        const double ti = term(p, used[i]) / scale[used[i]];
        b[i] += ti * p.ms;
        for (size_t j = 0; j < k; ++j) a[i][j] += ti * term(p, used[j]) / scale[used[j]];
      }
    }
    if (!Solve(a, b, k, &x)) continue;
    std::array<double, 3> coef{};
    bool negative = false;
    for (size_t i = 0; i < k; ++i) {
      coef[used[i]] = x[i] / scale[used[i]];
      negative = negative || coef[used[i]] < 0;
    }
    if (negative) continue;
    const LengthCost fit{coef[0], coef[1], coef[2]};
    double error = 0;
    for (const CostPoint& p : points) {
      const double e = fit.Cost(p.items, p.length) - p.ms;
      error += e * e;
    }
    if (error < best_error) {
      best_error = error;
      best = fit;
    }
  }
  return best;
}

std::vector<std::vector<size_t>> PlanByLength(const std::vector<int64_t>& lengths,
                                              const std::vector<int>& items,
                                              const LengthCost& cost, int max_items) {
  const size_t n = lengths.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  // best[j]: the least cost of the first j sorted requests; cut[j]: where the
  // last group of that plan starts. A group [i, j) is padded to its last
  // (longest) request's length.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, inf);
  std::vector<size_t> cut(n + 1, 0);
  best[0] = 0;
  for (size_t j = 1; j <= n; ++j) {
    int64_t group_items = 0;
    for (size_t i = j; i-- > 0;) {
      group_items += items[order[i]];
      // A group of several requests stays within max_items; one request is
      // always a group.
      if (i + 1 < j && group_items > max_items) break;
      const double c = best[i] + cost.Cost(group_items, lengths[order[j - 1]]);
      if (c < best[j]) {
        best[j] = c;
        cut[j] = i;
      }
    }
  }
  std::vector<std::vector<size_t>> groups;
  for (size_t j = n; j > 0; j = cut[j]) {
    groups.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(cut[j]),
                        order.begin() + static_cast<std::ptrdiff_t>(j));
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

TokenCount CountTokens(const std::vector<int64_t>& lengths, const std::vector<int>& items,
                       const std::vector<size_t>& group) {
  TokenCount count;
  int64_t longest = 0, group_items = 0;
  for (size_t i : group) {
    longest = std::max(longest, lengths[i]);
    group_items += items[i];
    count.real += items[i] * lengths[i];
  }
  count.computed = group_items * longest;
  return count;
}

}  // namespace inferd::scheduler
