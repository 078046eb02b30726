// FleetPlan: the whole answer of `inferd plan` (models, node shape or types,
// replicas, packing, lower bounds, cost), made once and read by the reports
// and the Kubernetes emitter.
//
// Two kinds: one node shape (--node-cores/--node-memory: the fewest nodes), or
// node types with prices (--node-type: the cheapest mix, mixed_packer.h).
//
// Pure data plus functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "plan/mixed_packer.h"
#include "plan/model_list.h"
#include "plan/node_types.h"
#include "plan/replica_split.h"
#include "plan/vector_packer.h"

namespace inferd::plan {

// Models moved by a rebalance: how many, and the bytes of their copies.
struct MoveCount {
  int models = 0;  // models with at least one replica on a node it was not on
  int64_t memory_bytes = 0;
};

// What a rebalance (--current, rebalance.h) did, for the reports.
struct RebalanceSummary {
  bool done = false;
  std::string current_file;
  int current_nodes = 0;
  double current_cost = 0;   // the running plan at its types' prices (mixed plans)
  int kept_nodes = 0;        // nodes of the running plan still in the plan
  int overloaded_nodes = 0;  // nodes of the running plan past their usable share at the new load
  MoveCount moved;           // this plan against the running one
  MoveCount from_scratch;    // a plan made from scratch against the running one
  double from_scratch_cost = 0;
  int from_scratch_nodes = 0;
};

struct FleetPlan {
  std::vector<ModelDemand> models;
  NodeShape shape;              // one shape; with types, only its headroom counts
  std::vector<NodeType> types;  // empty: one unpriced shape
  std::vector<PackItem> items;  // replicas, in model order
  Packing packing;
  LowerBound lower_bound;  // with types: the volumes over the most cores and memory of any type
  CostBound cost_bound;    // with types
  double cost_per_hour = 0;
  int best_single_type = -1;  // with types: the cheapest plan on one type alone
  double best_single_type_cost = 0;
  // Mixed plans: replicas of a split model have at most this share of the
  // usable cores of the largest type that holds it (kReplicaShares).
  double replica_share = 1.0;
  double pack_seconds = 0;              // wall time of the packing, for the report
  std::vector<std::string> node_names;  // set by a rebalance (its nodes keep their names)
  RebalanceSummary rebalance;

  bool mixed() const { return !types.empty(); }
  // The shape of node `index`: its type's, or the one shape.
  NodeShape ShapeOf(size_t index) const;
  // The shapes NodeLoad::type indexes.
  std::vector<NodeShape> Shapes() const;

  // "node-0001": the plan's name for node `index` (0-based), zero-padded to at
  // least four digits so names sort in order; a rebalanced node keeps its name.
  std::string NodeName(size_t index) const;
};

// Splits, packs and checks. kInvalidArgument (with the file's line) when a
// model fits on no node; kInternal if the packing breaks a constraint (a bug).
StatusOr<FleetPlan> MakeFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                  const std::string& file, const PackOptions& options = {});

// The cheapest mix of `types`. kInvalidArgument for bad types or a model that
// fits no type; kInternal if the packing breaks a constraint.
StatusOr<FleetPlan> MakeMixedFleetPlan(std::vector<ModelDemand> models,
                                       const std::vector<NodeType>& types, double headroom,
                                       const std::string& file, const PackOptions& options = {});

// The splits a mixed plan tries. 1: replicas sized to the largest type that
// holds the model, the fewest copies, and no two replicas of a model can
// share a node. 1/2: a hot model's replicas fit the smaller types too, and two
// (of different models) share the largest; on issue 31's fleet of many hot
// models the plan drops from 1.10x to 1.01x the bound, but a fleet whose
// replicas are mostly one model's needs twice the nodes (they cannot share).
// MakeMixedFleetPlan packs both and keeps the cheaper.
inline constexpr double kReplicaShares[] = {1.0, 0.5};

// The replicas and bounds of a one-shape plan, without packing (for a rebalance).
StatusOr<FleetPlan> PrepareFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                     const std::string& file);

// The replicas and bounds of a mixed plan, without packing (a rebalance packs
// them its own way). Checks the types.
StatusOr<FleetPlan> PrepareMixedFleetPlan(std::vector<ModelDemand> models,
                                          const std::vector<NodeType>& types, double headroom,
                                          const std::string& file, double replica_share = 1.0);

// Sets the cost, checks the packing against the types, and fills the lower
// bound of node counts; for plans whose packing was set by other code.
Status FinishFleetPlan(FleetPlan* plan);

}  // namespace inferd::plan
