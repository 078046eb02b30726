// From models to what the packer places: a node's usable capacity, the
// replicas of each model, and the lower bound on the number of nodes.
//
// A model needs rps * core_ms / 1000 cores. One whose need exceeds a node's
// usable cores is split into the fewest replicas that each fit,
// r = ceil(need / usable cores), each with 1/r of the rps and cores and a full
// copy of the memory. Each replica then needs more than (r-1)/r >= 1/2 of a
// node's usable cores, so no two replicas of a model can ever share a node:
// the capacity check alone keeps them apart.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "plan/model_list.h"

namespace inferd::plan {

struct NodeShape {
  double cores = 0;          // --node-cores
  int64_t memory_bytes = 0;  // --node-memory
  double headroom = 0.2;     // share of each node the plan leaves free, in [0, 1)

  double usable_cores() const { return cores * (1.0 - headroom); }
  // Whole bytes: the memory check is exact.
  int64_t usable_memory() const;
};

// Refuses a shape the plan cannot use (no cores, no memory, headroom outside [0, 1)).
Status ValidateNodeShape(const NodeShape& shape);

// One replica of one model: what the packer places on a node.
struct PackItem {
  int model = 0;             // index into the model list
  int replica = 0;           // 0-based
  int replicas = 1;          // of this model
  double rps = 0;            // this replica's share
  double cores = 0;          // this replica's share
  int64_t memory_bytes = 0;  // a full copy
};

// The replicas of every model, in model order. A model whose memory exceeds a
// node's usable memory fits on no node even alone: kInvalidArgument naming its
// line. Assumes a valid shape.
StatusOr<std::vector<PackItem>> SplitIntoReplicas(const std::vector<ModelDemand>& models,
                                                  const NodeShape& shape, const std::string& file);

// Over several shapes (node types): a model is split into replicas of at most
// `replica_share` of the most usable cores of any shape whose usable memory
// holds one copy. At 1 (as with one shape) each replica needs over half of
// those cores and never shares a node with another of its model; below 1,
// replicas of a model could share a node and the packer must keep them apart
// (mixed plans use 1/2: replicas that fit a smaller type, and two of
// different models on the largest). kInvalidArgument when no shape holds one
// copy.
StatusOr<std::vector<PackItem>> SplitIntoReplicas(const std::vector<ModelDemand>& models,
                                                  const std::vector<NodeShape>& shapes,
                                                  const std::string& file,
                                                  double replica_share = 1.0);

struct LowerBound {
  int nodes = 0;            // max(ceil(core_nodes), ceil(memory_nodes))
  double core_nodes = 0;    // total cores / usable cores per node
  double memory_nodes = 0;  // total memory (every replica's copy) / usable memory per node
};

// The volume bound of the issue: no plan can use fewer nodes. Replicas count
// their memory copies, because a model past one node cannot be served without them.
LowerBound ComputeLowerBound(const std::vector<PackItem>& items, const NodeShape& shape);

}  // namespace inferd::plan
