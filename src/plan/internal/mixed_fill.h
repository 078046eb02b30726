// The in-step fill (greedy_packing.h's PackIntoNodes) over nodes of several
// types, each with its own capacity: the constructive step of the mixed-type
// packer (plan/mixed_packer.h).
//
// It starts from `counts[t]` empty nodes of each type t. Items in decreasing
// dominant share go each to the node, among those where it fits, whose free
// room points most nearly its way (the largest cosine between the item's
// (cores, memory) and the node's free (cores, memory), both in `ref` units:
// the totals of the demand, so that neither dimension's unit dominates). An
// item that fits no open node opens one of the type that serves it cheapest:
// the least price x the item's dominant share of that type's capacity. So the
// fill always succeeds; nodes that stay empty are dropped. O(items x nodes).
//
// Pure function over the caller's sizes; thread-safe.
#pragma once

#include <vector>

#include "plan/internal/bins.h"
#include "plan/replica_split.h"

namespace inferd::plan::internal {

struct MixedNodeTypes {
  std::vector<Capacity> caps;  // usable capacity per type
  std::vector<double> prices;  // per type
  Capacity ref;                // the scale of the cosine: total demand
};

// Capacities from `shapes`, `prices` (one per shape), and the scale of the
// items' total demand.
MixedNodeTypes MakeMixedNodeTypes(const std::vector<NodeShape>& shapes,
                                  const std::vector<double>& prices,
                                  const std::vector<PackItem>& items);

// The items' sizes, shares of `types.ref`; replicas of a split model share a group.
std::vector<ItemSize> MixedSizes(const std::vector<PackItem>& items, const MixedNodeTypes& types);

// The type that holds `s` at the least share of its price; -1 when none holds it.
int CheapestTypeForItem(const MixedNodeTypes& types, const ItemSize& s);

std::vector<Bin> FillMixedNodes(const std::vector<ItemSize>& sizes, const MixedNodeTypes& types,
                                const std::vector<int>& counts);

// Gives each bin the cheapest type whose capacity holds its load (never a
// dearer one than it has).
void RetypeBins(const MixedNodeTypes& types, std::vector<Bin>* bins);

}  // namespace inferd::plan::internal
