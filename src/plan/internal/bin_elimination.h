// Local search that removes nodes from a packing: bin elimination.
// (With node types, each node has its own capacity and the order of the
// attempts weighs the nodes' prices.)
//
// It takes the least filled node, empties it, and puts its items back into
// the other nodes: each item, largest first, goes to the node it fills best;
// an item that fits nowhere may take the place of a strictly smaller item in
// some node, and that smaller item goes back to the pool (an ejection chain in
// the style of the minimum-bin-slack and "bin-oriented" repacking heuristics).
// If the pool empties, the node is gone for good; if not, every move of the
// attempt is undone and the next least filled node is tried. It stops when a
// whole pass removes nothing, when the count reaches `lower_bound`, or after
// `max_attempts` attempts (a bound on its time; it is deterministic).
//
// Moves only ever keep every node within `cap`. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "plan/internal/bins.h"

namespace inferd::plan::internal {

struct EliminationOptions {
  int lower_bound = 0;              // stop at this many nodes: no packing has fewer
  int64_t max_attempts = 200000;    // nodes tried for emptying, in all passes
  int max_ejections_per_item = 64;  // swaps one attempt may make, per item of the emptied node
  // Per node type (Bin::type), for mixed packings: nodes are tried for
  // emptying by price x unfilled share, most first. Empty: by fill alone.
  std::vector<double> prices;
  // Stop once the nodes' prices (or count, with no prices) add up to at most this.
  double stop_cost = 0;
  // Nodes never tried for emptying (they may still take items); none if unset.
  std::function<bool(int)> skip;
  // Called with the index of each node removed, before it is erased, so that a
  // caller can keep its own per-node data in step (a rebalance: the names).
  std::function<void(int)> on_remove;
};

struct EliminationStats {
  int64_t attempts = 0;
  int removed = 0;
};

EliminationStats EliminateBins(const std::vector<ItemSize>& sizes, const Capacity& cap,
                               const EliminationOptions& options, std::vector<Bin>* bins);

// The same over nodes of several types: bin b holds caps[b.type].
EliminationStats EliminateBins(const std::vector<ItemSize>& sizes,
                               const std::vector<Capacity>& caps, const EliminationOptions& options,
                               std::vector<Bin>* bins);

}  // namespace inferd::plan::internal
