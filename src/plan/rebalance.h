// Rebalance (`inferd plan --current PLAN.json`): from a running plan to a
// valid plan for new demand that moves as few models as it can, weighted by
// their memory (a move is a copy loaded on another node).
//
// The running plan is the `--json` answer of an earlier `inferd plan`: its
// nodes' names, types (mixed plans) and models. The method:
//  1. Each replica of a model goes back to a node that held the model (the
//     r-th replica to the r-th such node); models new to the list and extra
//     replicas go to a pool.
//  2. A node past its type's usable share at the new load keeps what it can:
//     the replicas that free the overloaded dimension most per byte moved
//     leave first, to the pool.
//  3. The pool, largest first, goes to the fullest running node where each
//     replica fits (best fit); what fits nowhere is packed onto new nodes by
//     the planner (mixed_packer.h or vector_packer.h), as a plan of its own.
//  4. While the plan costs more than `cost_target` x the lower bound (cost with
//     types, node count with one shape), bin elimination empties the nodes
//     that waste most. Running nodes keep their type (a re-typed node is a
//     new machine: all its models would move); new nodes are re-typed.
// It then makes the plan from scratch too and counts what that would move,
// matching its nodes to the running ones (same type, most memory in common
// first) in the way that moves least.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "plan/fleet_plan.h"

namespace inferd::plan {

struct CurrentNode {
  std::string name;
  std::string type;                 // "" in a one-shape plan
  std::vector<std::string> models;  // a split model appears on each node with a replica
};

// Parses the `--json` of `inferd plan`; `file` names it in messages.
StatusOr<std::vector<CurrentNode>> ParseCurrentPlan(const std::string& text,
                                                    const std::string& file);
StatusOr<std::vector<CurrentNode>> LoadCurrentPlan(const std::string& file);

struct RebalanceOptions {
  double cost_target = 1.05;  // eliminate nodes while over this many times the bound
  PackOptions pack;
};

// `plan` holds the new demand's replicas and bounds (PrepareMixedFleetPlan, or
// a one-shape plan's); sets its packing, node names and rebalance summary, and
// checks it. kInvalidArgument when a running node's type is not among the
// plan's types.
Status Rebalance(const std::vector<CurrentNode>& current, const std::string& current_file,
                 const RebalanceOptions& options, FleetPlan* plan);

// The replicas and bounds of a mixed plan to rebalance `current` with
// (PrepareMixedFleetPlan), split the way the running plan was: of
// kReplicaShares, the split that gives the most models as many replicas as
// nodes hold them in `current`.
StatusOr<FleetPlan> PrepareMixedRebalance(const std::vector<ModelDemand>& models,
                                          const std::vector<NodeType>& types, double headroom,
                                          const std::string& file,
                                          const std::vector<CurrentNode>& current);

// What `packing` (names `names`) moves against `current`: the models with a
// replica on a node that did not hold them. Models new to the list do not count.
MoveCount CountMoves(const FleetPlan& plan, const std::vector<std::string>& names,
                     const std::vector<CurrentNode>& current);

}  // namespace inferd::plan
