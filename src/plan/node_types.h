// Node types for a plan over a mix of machines: `--node-type
// NAME:CORES:MEMORY:PRICE` (a per-hour price in any currency), and the lower
// bound on the cost of any plan over them.
//
// The cost bound is the LP relaxation over the two volumes: minimise
// sum_t price_t * n_t subject to sum_t usable_cores_t * n_t >= total cores,
// sum_t usable_memory_t * n_t >= total memory, n_t >= 0 (fractional nodes).
// With two constraints an optimal basic solution has at most two types in its
// mix, so it is found exactly by trying every single type (n = the larger of
// its two volume ratios) and every pair (the 2x2 system with both
// constraints tight, when its solution is non-negative). O(types^2).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "plan/replica_split.h"

namespace inferd::plan {

struct NodeType {
  std::string name;          // [a-z0-9-], at most 63: it becomes a label value
  double cores = 0;          // cores of one node
  int64_t memory_bytes = 0;  // memory of one node
  double price = 0;          // per hour, any currency; > 0

  NodeShape Shape(double headroom) const { return {cores, memory_bytes, headroom}; }
};

// "c5:16:32Gi:0.68" -> {c5, 16, 32 GiB, 0.68}. kInvalidArgument saying which
// field is wrong.
StatusOr<NodeType> ParseNodeType(std::string_view text);

// Refuses an empty list, repeated names and a type with no cores, memory or
// price; `headroom` as ValidateNodeShape.
Status ValidateNodeTypes(const std::vector<NodeType>& types, double headroom);

struct CostBound {
  double cost = 0;            // per hour: no plan over `types` costs less
  std::vector<double> nodes;  // the LP's fractional nodes per type (at most two non-zero)
  double core_total = 0;      // cores of every replica
  double memory_total = 0;    // bytes of every replica's copy
};

CostBound ComputeCostBound(const std::vector<PackItem>& items, const std::vector<NodeType>& types,
                           double headroom);

// The cheapest type whose usable share holds (cores, memory), or -1.
int CheapestTypeFor(const std::vector<NodeType>& types, double headroom, double cores,
                    int64_t memory);

}  // namespace inferd::plan
