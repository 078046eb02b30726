// PackItems: the fewest nodes that hold every replica, each node's cores and
// memory within its usable share (two-dimensional vector bin packing).
//
// The method, and why:
//  1. Two classic constructions give an upper bound: first-fit decreasing by
//     dominant share, and the bin-centric dot-product heuristic.
//  2. The in-step fill (internal/greedy_packing.h, PackIntoNodes) for a fixed
//     node count, bisected between the lower bound and that upper bound: each
//     replica goes to the node whose free room points its way, so core-heavy
//     replicas of hot models share nodes with large cold models. This is what
//     closes the gap when both dimensions bind: at 10,000 models with cores and
//     memory equally tight, FFD is 43% over the lower bound, the dot product
//     27%, the in-step fill 2% (docs/SCALING.md).
//  3. Bin elimination (internal/bin_elimination.h) on the result: empty the
//     least filled node into the others with an ejection chain of swaps.
//  4. For small sets (up to `exact_max_items` replicas) still above the lower
//     bound: depth-first branch and bound finds or proves the optimum.
// Every step is deterministic: the same list gives the same plan.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "plan/replica_split.h"

namespace inferd::plan {

struct PackOptions {
  int exact_max_items = 24;               // branch and bound up to this many replicas
  int64_t exact_search_nodes = 2000000;   // its budget (a few hundred ms at most)
  int64_t elimination_attempts = 200000;  // nodes tried for emptying, per construction
};

struct NodeLoad {
  std::vector<int> items;  // indices into the items, ascending
  double cores = 0;
  int64_t memory_bytes = 0;
  int type = 0;  // its node type (mixed_packer.h); 0 with one shape
};

struct Packing {
  std::vector<NodeLoad> nodes;
  // A bound no packing can beat: the volume bound, or the count of replicas
  // needing over half a node in one dimension (no two of them share a node).
  int strong_lower_bound = 0;
  bool optimal = false;     // nodes == strong_lower_bound, or the exact search proved it
  std::string method;       // e.g. "in-step fill + bin elimination"
  int first_fit_nodes = 0;  // the two constructions alone, for the report
  int dot_product_nodes = 0;
  int64_t elimination_attempts = 0;
};

Packing PackItems(const std::vector<PackItem>& items, const NodeShape& shape,
                  const PackOptions& options = {});

// Checks a packing independently of how it was made: each item on exactly one
// node, each node within the usable cores and memory, the replicas of a model
// on different nodes. kInternal naming the first violation.
Status CheckPacking(const Packing& packing, const std::vector<PackItem>& items,
                    const NodeShape& shape);

// The same over node types: node n is checked against shapes[n.type] (a type
// outside the list is a violation too).
Status CheckPacking(const Packing& packing, const std::vector<PackItem>& items,
                    const std::vector<NodeShape>& shapes);

}  // namespace inferd::plan
