#include "plan/vector_packer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "plan/internal/bin_elimination.h"
#include "plan/internal/exact_packing.h"
#include "plan/internal/greedy_packing.h"

namespace inferd::plan {
namespace {

using internal::Bin;
using internal::Capacity;
using internal::ItemSize;

std::vector<ItemSize> SizesOf(const std::vector<PackItem>& items, const Capacity& cap) {
  std::vector<ItemSize> sizes;
  sizes.reserve(items.size());
  for (const PackItem& it : items) {
    ItemSize s;
    s.cores = it.cores;
    s.memory = it.memory_bytes;
    s.core_share = it.cores / cap.cores;
    s.memory_share = static_cast<double>(it.memory_bytes) / static_cast<double>(cap.memory);
    sizes.push_back(s);
  }
  return sizes;
}

// Items over half a node in one dimension pairwise exclude each other.
int BigItemBound(const std::vector<ItemSize>& sizes) {
  int cores = 0, memory = 0;
  for (const ItemSize& s : sizes) {
    cores += s.core_share > 0.5 + internal::kCoreTolerance;
    memory += s.memory_share > 0.5;
  }
  return std::max(cores, memory);
}

}  // namespace

Packing PackItems(const std::vector<PackItem>& items, const NodeShape& shape,
                  const PackOptions& options) {
  const Capacity cap{shape.usable_cores(), shape.usable_memory()};
  const std::vector<ItemSize> sizes = SizesOf(items, cap);
  Packing result;
  result.strong_lower_bound = std::max(ComputeLowerBound(items, shape).nodes, BigItemBound(sizes));

  internal::EliminationOptions elimination;
  elimination.lower_bound = result.strong_lower_bound;
  elimination.max_attempts = options.elimination_attempts;

  std::vector<Bin> ffd = internal::FirstFitDecreasing(sizes, cap);
  std::vector<Bin> dot = internal::DotProductPacking(sizes, cap);
  result.first_fit_nodes = static_cast<int>(ffd.size());
  result.dot_product_nodes = static_cast<int>(dot.size());
  std::vector<Bin> best = std::move(dot);
  result.method = "dot product";
  if (ffd.size() < best.size()) {
    best = std::move(ffd);
    result.method = "first-fit decreasing";
  }
  // The fewest nodes the in-step fill manages, by bisection between the lower
  // bound and the best so far (more nodes only make it easier).
  int lo = result.strong_lower_bound, hi = static_cast<int>(best.size()) - 1;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    auto even = internal::PackIntoNodes(sizes, cap, mid);
    if (even) {
      std::erase_if(*even, [](const Bin& b) { return b.items.empty(); });
      best = std::move(*even);
      result.method = "in-step fill";
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  if (static_cast<int>(best.size()) > result.strong_lower_bound) {
    const internal::EliminationStats st = internal::EliminateBins(sizes, cap, elimination, &best);
    result.elimination_attempts = st.attempts;
    if (st.removed > 0) result.method += " + bin elimination";
  }
  result.optimal = static_cast<int>(best.size()) <= result.strong_lower_bound;

  if (!result.optimal && static_cast<int>(items.size()) <= options.exact_max_items) {
    internal::ExactResult exact =
        internal::PackExactly(sizes, cap, result.strong_lower_bound, static_cast<int>(best.size()),
                              options.exact_search_nodes);
    if (exact.bins) {
      best = std::move(*exact.bins);
      result.method = "branch and bound";
    }
    result.optimal = exact.proven;
    if (exact.proven && !exact.bins) result.method += " (optimal: proven by branch and bound)";
  }

  for (Bin& b : best) {
    if (b.items.empty()) continue;
    std::sort(b.items.begin(), b.items.end());
    NodeLoad n;
    n.items = std::move(b.items);
    n.cores = 0;
    n.memory_bytes = 0;
    for (int i : n.items) {
      n.cores += items[i].cores;
      n.memory_bytes += items[i].memory_bytes;
    }
    result.nodes.push_back(std::move(n));
  }
  // Nodes in the order of their first model: stable names for a stable list.
  std::sort(result.nodes.begin(), result.nodes.end(),
            [](const NodeLoad& x, const NodeLoad& y) { return x.items.front() < y.items.front(); });
  return result;
}

Status CheckPacking(const Packing& packing, const std::vector<PackItem>& items,
                    const NodeShape& shape) {
  return CheckPacking(packing, items, std::vector<NodeShape>{shape});
}

Status CheckPacking(const Packing& packing, const std::vector<PackItem>& items,
                    const std::vector<NodeShape>& shapes) {
  std::vector<int> placed(items.size(), 0);
  for (size_t n = 0; n < packing.nodes.size(); ++n) {
    const NodeLoad& node = packing.nodes[n];
    if (node.type < 0 || node.type >= static_cast<int>(shapes.size())) {
      return Internal("plan: node " + std::to_string(n) + " has an unknown type " +
                      std::to_string(node.type));
    }
    const NodeShape& shape = shapes[node.type];
    double cores = 0;
    int64_t memory = 0;
    std::set<int> models;
    for (int i : node.items) {
      if (i < 0 || i >= static_cast<int>(items.size())) {
        return Internal("plan: node " + std::to_string(n) + " holds an unknown item");
      }
      ++placed[i];
      cores += items[i].cores;
      memory += items[i].memory_bytes;
      if (!models.insert(items[i].model).second) {
        return Internal("plan: node " + std::to_string(n) + " holds two replicas of one model");
      }
    }
    if (cores > shape.usable_cores() * (1 + internal::kCoreTolerance)) {
      return Internal("plan: node " + std::to_string(n) + " needs " + std::to_string(cores) +
                      " cores, over the usable " + std::to_string(shape.usable_cores()));
    }
    if (memory > shape.usable_memory()) {
      return Internal("plan: node " + std::to_string(n) + " needs " + std::to_string(memory) +
                      " bytes, over the usable " + std::to_string(shape.usable_memory()));
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (placed[i] != 1) {
      return Internal("plan: item " + std::to_string(i) + " is placed " +
                      std::to_string(placed[i]) + " times");
    }
  }
  return Status::Ok();
}

}  // namespace inferd::plan
