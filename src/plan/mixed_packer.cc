#include "plan/mixed_packer.h"

#include <algorithm>
#include <cmath>

#include "plan/internal/bin_elimination.h"
#include "plan/internal/mixed_fill.h"

namespace inferd::plan {
namespace {

using internal::Bin;
using internal::Capacity;
using internal::ItemSize;
using internal::MixedNodeTypes;

// Scales of the LP mix tried: a little under (the fill opens what it lacks,
// in the type each replica wants) to a little over (slack to fill in step).
constexpr double kMixScales[] = {0.97, 1.0, 1.03, 1.06, 1.10};

struct Candidate {
  std::vector<Bin> bins;
  double cost = 0;
  std::string name;
  std::string method;
  bool single_type = false;
};

double CostOf(const std::vector<Bin>& bins, const MixedNodeTypes& types) {
  double cost = 0;
  for (const Bin& b : bins) cost += types.prices[b.type];
  return cost;
}

Packing ToPacking(std::vector<Bin> bins, const std::vector<PackItem>& items) {
  Packing p;
  for (Bin& b : bins) {
    if (b.items.empty()) continue;
    std::sort(b.items.begin(), b.items.end());
    NodeLoad n;
    n.items = std::move(b.items);
    n.type = b.type;
    for (int i : n.items) {
      n.cores += items[i].cores;
      n.memory_bytes += items[i].memory_bytes;
    }
    p.nodes.push_back(std::move(n));
  }
  // By type, then by first model: stable names for a stable list.
  std::sort(p.nodes.begin(), p.nodes.end(), [](const NodeLoad& x, const NodeLoad& y) {
    if (x.type != y.type) return x.type < y.type;
    return x.items.front() < y.items.front();
  });
  return p;
}

}  // namespace

double PackingCost(const Packing& packing, const std::vector<NodeType>& types) {
  double cost = 0;
  for (const NodeLoad& n : packing.nodes) cost += types[n.type].price;
  return cost;
}

MixedPacking PackMixed(const std::vector<PackItem>& items, const std::vector<NodeType>& types,
                       double headroom, const PackOptions& options) {
  const CostBound bound = ComputeCostBound(items, types, headroom);
  std::vector<NodeShape> shapes;
  std::vector<double> prices;
  for (const NodeType& t : types) {
    shapes.push_back(t.Shape(headroom));
    prices.push_back(t.price);
  }
  const MixedNodeTypes mixed = internal::MakeMixedNodeTypes(shapes, prices, items);
  const std::vector<ItemSize> sizes = internal::MixedSizes(items, mixed);

  MixedPacking result;
  std::vector<Candidate> candidates;
  for (double scale : kMixScales) {
    std::vector<int> counts(types.size());
    for (size_t t = 0; t < types.size(); ++t) {
      counts[t] = static_cast<int>(std::floor(scale * bound.nodes[t] + 1e-9));
    }
    char name[48];
    std::snprintf(name, sizeof name, "LP mix x%.2f", scale);
    candidates.push_back({internal::FillMixedNodes(sizes, mixed, counts), 0, name, "in-step fill"});
  }
  // Each type alone, when it holds every replica: the same fill with nodes of
  // that type only (the others given no room).
  for (size_t t = 0; t < types.size(); ++t) {
    MixedNodeTypes alone = mixed;
    for (size_t u = 0; u < types.size(); ++u) {
      if (u != t) alone.caps[u] = Capacity{0, 0};
    }
    const bool holds_all = std::all_of(sizes.begin(), sizes.end(), [&](const ItemSize& s) {
      return Fits(alone.caps[t], 0, 0, s);
    });
    if (!holds_all) continue;
    std::vector<int> counts(types.size(), 0);
    counts[t] = static_cast<int>(
        std::ceil(std::max(bound.core_total / alone.caps[t].cores,
                           bound.memory_total / static_cast<double>(alone.caps[t].memory)) -
                  1e-9));
    Candidate c;
    c.name = types[t].name + " alone";
    c.method = "in-step fill";
    c.bins = internal::FillMixedNodes(sizes, alone, counts);
    c.single_type = true;
    candidates.push_back(std::move(c));
  }

  internal::EliminationOptions elimination;
  elimination.prices = mixed.prices;
  elimination.max_attempts = options.elimination_attempts;
  int64_t attempts = 0;
  size_t best = 0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    Candidate& c = candidates[k];
    if (!c.single_type) internal::RetypeBins(mixed, &c.bins);
    const internal::EliminationStats st =
        internal::EliminateBins(sizes, mixed.caps, elimination, &c.bins);
    attempts += st.attempts;
    c.cost = CostOf(c.bins, mixed);
    if (c.single_type && (result.best_single_type < 0 || c.cost < result.best_single_type_cost)) {
      result.best_single_type = c.bins.empty() ? -1 : c.bins[0].type;
      result.best_single_type_cost = c.cost;
    }
    internal::RetypeBins(mixed, &c.bins);
    c.cost = CostOf(c.bins, mixed);
    const Candidate& b = candidates[best];
    if (c.cost < b.cost - 1e-9 || (c.cost < b.cost + 1e-9 && c.bins.size() < b.bins.size())) {
      best = k;
    }
  }
  Candidate& winner = candidates[best];
  result.candidate = winner.name;
  result.cost = winner.cost;
  result.packing = ToPacking(std::move(winner.bins), items);
  result.packing.method =
      winner.name + " (" + winner.method + "), then bin elimination by price and re-typing";
  result.packing.elimination_attempts = attempts;
  return result;
}

}  // namespace inferd::plan
