// An exact packer for small sets: depth-first branch and bound.
//
// Items go in decreasing dominant share; each goes into one of the open nodes
// where it fits (nodes with the same load are tried once: they are
// interchangeable) or into one new node. A branch is cut when its nodes plus
// the volume still to place, less the room left in its open nodes, cannot beat
// the best packing found. The search stops at the first packing that meets
// `lower_bound` (nothing can beat it) or after `node_limit` search nodes;
// `proven` says whether the answer is known to be optimal.
//
// Exponential in the worst case: PackItems uses it only up to a few dozen
// items, where it answers in milliseconds. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/internal/bins.h"

namespace inferd::plan::internal {

struct ExactResult {
  std::optional<std::vector<Bin>> bins;  // a packing with fewer nodes than `upper_bound`, if found
  bool proven = false;                   // the search finished: no packing has fewer nodes
  int64_t search_nodes = 0;
};

ExactResult PackExactly(const std::vector<ItemSize>& sizes, const Capacity& cap, int lower_bound,
                        int upper_bound, int64_t node_limit);

}  // namespace inferd::plan::internal
