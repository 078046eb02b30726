// Constructive packings: the starting points that bin elimination improves.
//
// - FirstFitDecreasing: items by decreasing dominant share (the larger of the
//   item's core and memory shares of a node), each into the first node where
//   it fits. The classic start for vector bin packing; O(items x nodes).
// - DotProductPacking: bin-centric. Opens one node at a time and keeps adding
//   the item that fits and best matches what the node still has free (largest
//   dot product of the item's shares with the node's free shares), so core-heavy
//   and memory-heavy models end up together. The best of the heuristics of
//   Panigrahy et al., "Heuristics for Vector Bin Packing" (MSR, 2011).
//   O(items^2) in the worst case.
// - PackIntoNodes: a fixed number of nodes, filled in step. Items by
//   decreasing dominant share, each into the node whose free room points most
//   nearly the item's way: the largest cosine between the item's (core,
//   memory) shares and the node's free shares. A core-heavy replica goes where
//   cores are free, a large cold model where memory is, so the nodes fill in
//   both dimensions at once and the small items at the end fill what is left.
//   (Tried and dropped: the least resulting max fill, 17% over the lower bound
//   at 10,000 models where the cosine is 2% over; the plain dot product, 6%.)
//   Fails (nullopt) when an item fits nowhere; PackItems searches the
//   smallest count it succeeds with. O(items x nodes).
//
// Pure functions over the caller's sizes; thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "plan/internal/bins.h"

namespace inferd::plan::internal {

std::vector<Bin> FirstFitDecreasing(const std::vector<ItemSize>& sizes, const Capacity& cap);
std::vector<Bin> DotProductPacking(const std::vector<ItemSize>& sizes, const Capacity& cap);
std::optional<std::vector<Bin>> PackIntoNodes(const std::vector<ItemSize>& sizes,
                                              const Capacity& cap, int nodes);

}  // namespace inferd::plan::internal
