// The packer's working state, private to plan/: item sizes and bins.
//
// Cores are fractional (a sum is checked with a relative tolerance of 1e-9);
// memory is whole bytes and checked exactly. `share` is an item's size as
// fractions of a node's usable (cores, memory), used only to order and score.
// Not thread-safe; each packing run owns its state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace inferd::plan::internal {

struct Capacity {
  double cores = 0;
  int64_t memory = 0;
};

struct ItemSize {
  double cores = 0;
  int64_t memory = 0;
  double core_share = 0;    // cores / usable cores
  double memory_share = 0;  // memory / usable memory
  // Replicas of one model that could share a node carry its index here and
  // must be kept apart (mixed plans: replica_split.h); -1 for the rest.
  int group = -1;
  double dominant() const { return std::max(core_share, memory_share); }
  double sum() const { return core_share + memory_share; }
};

struct Bin {
  double cores = 0;
  int64_t memory = 0;
  std::vector<int> items;
  int type = 0;  // index of its node type (its capacity) in a mixed packing; 0 with one shape
};

inline constexpr double kCoreTolerance = 1e-9;

inline bool Fits(const Capacity& cap, double cores, int64_t memory, const ItemSize& s) {
  return cores + s.cores <= cap.cores * (1 + kCoreTolerance) && memory + s.memory <= cap.memory;
}
inline bool Fits(const Capacity& cap, const Bin& b, const ItemSize& s) {
  return Fits(cap, b.cores, b.memory, s);
}
inline void Place(Bin& b, int item, const ItemSize& s) {
  b.cores += s.cores;
  b.memory += s.memory;
  b.items.push_back(item);
}

// Whether `b` already holds an item of s's group, other than `except`.
inline bool HoldsGroup(const Bin& b, const ItemSize& s, const std::vector<ItemSize>& sizes,
                       int except = -1) {
  if (s.group < 0) return false;
  for (int j : b.items) {
    if (j != except && sizes[j].group == s.group) return true;
  }
  return false;
}

// A bin's fill as the larger of its two shares: how full its tighter dimension is.
inline double Fill(const Capacity& cap, const Bin& b) {
  return std::max(b.cores / cap.cores,
                  static_cast<double>(b.memory) / static_cast<double>(cap.memory));
}

}  // namespace inferd::plan::internal
