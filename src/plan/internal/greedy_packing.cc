#include "plan/internal/greedy_packing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferd::plan::internal {

namespace {

// Decreasing dominant share; ties by the other dimension, then by index, so
// that the plan is deterministic.
std::vector<int> DecreasingOrder(const std::vector<ItemSize>& sizes) {
  std::vector<int> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    const double dx = sizes[x].dominant(), dy = sizes[y].dominant();
    if (dx != dy) return dx > dy;
    return sizes[x].sum() > sizes[y].sum();
  });
  return order;
}

}  // namespace

std::vector<Bin> FirstFitDecreasing(const std::vector<ItemSize>& sizes, const Capacity& cap) {
  const std::vector<int> order = DecreasingOrder(sizes);
  std::vector<Bin> bins;
  for (int i : order) {
    auto it = std::find_if(bins.begin(), bins.end(),
                           [&](const Bin& b) { return Fits(cap, b, sizes[i]); });
    if (it == bins.end()) it = bins.insert(bins.end(), Bin{});
    Place(*it, i, sizes[i]);
  }
  return bins;
}

std::vector<Bin> DotProductPacking(const std::vector<ItemSize>& sizes, const Capacity& cap) {
  std::vector<int> left(sizes.size());
  std::iota(left.begin(), left.end(), 0);
  std::vector<Bin> bins;
  const double mem_cap = static_cast<double>(cap.memory);
  while (!left.empty()) {
    Bin bin;
    for (;;) {
      const double free_cores = 1.0 - bin.cores / cap.cores;
      const double free_memory = 1.0 - static_cast<double>(bin.memory) / mem_cap;
      int best = -1;
      double best_score = -1;
      for (size_t k = 0; k < left.size(); ++k) {
        const ItemSize& s = sizes[left[k]];
        if (!Fits(cap, bin, s)) continue;
        const double score = s.core_share * free_cores + s.memory_share * free_memory;
        if (score > best_score) {
          best_score = score;
          best = static_cast<int>(k);
        }
      }
      // Every item fits an empty node (SplitIntoReplicas checked it); should one
      // not, it still gets a node of its own and the plan's check reports it.
      if (best < 0 && bin.items.empty()) best = static_cast<int>(left.size()) - 1;
      if (best < 0) break;
      Place(bin, left[best], sizes[left[best]]);
      left[best] = left.back();
      left.pop_back();
    }
    bins.push_back(std::move(bin));
  }
  return bins;
}

std::optional<std::vector<Bin>> PackIntoNodes(const std::vector<ItemSize>& sizes,
                                              const Capacity& cap, int nodes) {
  std::vector<Bin> bins(static_cast<size_t>(std::max(nodes, 0)));
  const double mem_cap = static_cast<double>(cap.memory);
  for (int i : DecreasingOrder(sizes)) {
    const ItemSize& s = sizes[i];
    int best = -1;
    double best_score = 0;
    for (int b = 0; b < nodes; ++b) {
      if (!Fits(cap, bins[b], s)) continue;
      // The cosine between the item and the node's free room, up to the
      // item's own length (the same for every node).
      const double free_cores = 1 - bins[b].cores / cap.cores;
      const double free_memory = 1 - static_cast<double>(bins[b].memory) / mem_cap;
      const double room = std::sqrt(free_cores * free_cores + free_memory * free_memory);
      const double score =
          (s.core_share * free_cores + s.memory_share * free_memory) / std::max(room, 1e-12);
      if (best < 0 || score > best_score) {
        best = b;
        best_score = score;
      }
    }
    if (best < 0) return std::nullopt;
    Place(bins[best], i, s);
  }
  return bins;
}

}  // namespace inferd::plan::internal
