#include "plan/internal/mixed_fill.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferd::plan::internal {
namespace {

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

// Decreasing dominant share of the demand's scale, ties by index.
std::vector<int> DecreasingOrder(const std::vector<ItemSize>& sizes, const Capacity& ref) {
  std::vector<double> key(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    key[i] = std::max(Share(sizes[i].cores, ref.cores),
                      Share(static_cast<double>(sizes[i].memory), static_cast<double>(ref.memory)));
  }
  std::vector<int> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key[x] > key[y]; });
  return order;
}

}  // namespace

MixedNodeTypes MakeMixedNodeTypes(const std::vector<NodeShape>& shapes,
                                  const std::vector<double>& prices,
                                  const std::vector<PackItem>& items) {
  MixedNodeTypes types;
  for (const NodeShape& s : shapes) types.caps.push_back({s.usable_cores(), s.usable_memory()});
  types.prices = prices;
  for (const PackItem& it : items) {
    types.ref.cores += it.cores;
    types.ref.memory += it.memory_bytes;
  }
  return types;
}

std::vector<ItemSize> MixedSizes(const std::vector<PackItem>& items, const MixedNodeTypes& types) {
  std::vector<ItemSize> sizes;
  sizes.reserve(items.size());
  for (const PackItem& it : items) {
    ItemSize s;
    s.cores = it.cores;
    s.memory = it.memory_bytes;
    s.core_share = Share(it.cores, types.ref.cores);
    s.memory_share =
        Share(static_cast<double>(it.memory_bytes), static_cast<double>(types.ref.memory));
    s.group = it.replicas > 1 ? it.model : -1;
    sizes.push_back(s);
  }
  return sizes;
}

int CheapestTypeForItem(const MixedNodeTypes& types, const ItemSize& s) {
  int best = -1;
  double best_cost = 0;
  for (size_t t = 0; t < types.caps.size(); ++t) {
    const Capacity& cap = types.caps[t];
    if (!Fits(cap, 0, 0, s)) continue;
    const double share = std::max(s.cores / cap.cores,
                                  static_cast<double>(s.memory) / static_cast<double>(cap.memory));
    const double cost = types.prices[t] * share;
    if (best < 0 || cost < best_cost) {
      best = static_cast<int>(t);
      best_cost = cost;
    }
  }
  return best;
}

std::vector<Bin> FillMixedNodes(const std::vector<ItemSize>& sizes, const MixedNodeTypes& types,
                                const std::vector<int>& counts) {
  std::vector<Bin> bins;
  for (size_t t = 0; t < counts.size(); ++t) {
    for (int k = 0; k < counts[t]; ++k) {
      bins.emplace_back();
      bins.back().type = static_cast<int>(t);
    }
  }
  const double ref_cores = types.ref.cores > 0 ? types.ref.cores : 1;
  const double ref_memory = types.ref.memory > 0 ? static_cast<double>(types.ref.memory) : 1;
  for (int i : DecreasingOrder(sizes, types.ref)) {
    const ItemSize& s = sizes[i];
    const double item_cores = s.cores / ref_cores;
    const double item_memory = static_cast<double>(s.memory) / ref_memory;
    int best = -1;
    double best_score = 0;
    for (size_t b = 0; b < bins.size(); ++b) {
      const Capacity& cap = types.caps[bins[b].type];
      if (!Fits(cap, bins[b], s) || HoldsGroup(bins[b], s, sizes)) continue;
      const double free_cores = (cap.cores - bins[b].cores) / ref_cores;
      const double free_memory = static_cast<double>(cap.memory - bins[b].memory) / ref_memory;
      const double room = std::sqrt(free_cores * free_cores + free_memory * free_memory);
      const double score =
          (item_cores * free_cores + item_memory * free_memory) / std::max(room, 1e-300);
      if (best < 0 || score > best_score) {
        best = static_cast<int>(b);
        best_score = score;
      }
    }
    if (best < 0) {
      // Every item fits some type (the replica split checked it); should one
      // not, it gets a node of the first type and the plan's check reports it.
      bins.emplace_back();
      bins.back().type = std::max(0, CheapestTypeForItem(types, s));
      best = static_cast<int>(bins.size()) - 1;
    }
    Place(bins[best], i, s);
  }
  std::erase_if(bins, [](const Bin& b) { return b.items.empty(); });
  return bins;
}

void RetypeBins(const MixedNodeTypes& types, std::vector<Bin>* bins) {
  for (Bin& b : *bins) {
    const ItemSize load{b.cores, b.memory, 0, 0};
    for (size_t t = 0; t < types.caps.size(); ++t) {
      if (types.prices[t] < types.prices[b.type] && Fits(types.caps[t], 0, 0, load)) {
        b.type = static_cast<int>(t);
      }
    }
  }
}

}  // namespace inferd::plan::internal
