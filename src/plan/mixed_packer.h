// PackMixed: the cheapest fleet over several node types (`--node-type`) that
// holds every replica, each node within its type's usable cores and memory.
//
// The method, and why:
//  1. The LP bound (node_types.h) says which mix of types the volumes want:
//     at most two types, in fractional counts n_t.
//  2. Candidates, each filled, then improved the same way:
//     - the LP mix scaled by a few factors around 1 (floor of lambda * n_t
//       nodes of each type), filled in step (internal/mixed_fill.h): each
//       replica goes to the node whose free room points its way, a replica
//       that fits nowhere opens the type that serves it cheapest;
//     - every single type that holds every replica, filled the same way
//       with nodes of that type only (its cost is reported).
//     Replicas of one model may be small enough to share a node (a mixed
//     plan splits hot models finer, fleet_plan.cc): every step keeps them
//     apart (ItemSize::group).
//     Improvement: bin elimination (internal/bin_elimination.h) with nodes
//     tried by price x unfilled share, then each node re-typed to the
//     cheapest type its load fits.
//  3. The cheapest candidate wins (ties: fewer nodes, then the earlier).
// Deterministic: the same list gives the same plan.
//
// Pure function; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "plan/node_types.h"
#include "plan/vector_packer.h"

namespace inferd::plan {

struct MixedPacking {
  Packing packing;  // NodeLoad::type indexes the types
  double cost = 0;  // per hour
  // The cheapest plan on one type alone (-1: no type holds every replica).
  int best_single_type = -1;
  double best_single_type_cost = 0;
  std::string candidate;  // which start won, e.g. "LP mix x1.03"
};

MixedPacking PackMixed(const std::vector<PackItem>& items, const std::vector<NodeType>& types,
                       double headroom, const PackOptions& options = {});

// The cost of a packing's nodes at `types`' prices.
double PackingCost(const Packing& packing, const std::vector<NodeType>& types);

}  // namespace inferd::plan
