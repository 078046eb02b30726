#include "plan/fleet_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace inferd::plan {

NodeShape FleetPlan::ShapeOf(size_t index) const {
  if (!mixed()) return shape;
  return types[packing.nodes[index].type].Shape(shape.headroom);
}

std::vector<NodeShape> FleetPlan::Shapes() const {
  if (!mixed()) return {shape};
  std::vector<NodeShape> shapes;
  for (const NodeType& t : types) shapes.push_back(t.Shape(shape.headroom));
  return shapes;
}

std::string FleetPlan::NodeName(size_t index) const {
  if (index < node_names.size()) return node_names[index];
  int width = 4;
  for (size_t n = packing.nodes.size(); n >= 10000; n /= 10) ++width;
  char buf[32];
  std::snprintf(buf, sizeof buf, "node-%0*zu", width, index + 1);
  return buf;
}

StatusOr<FleetPlan> PrepareFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                     const std::string& file) {
  RETURN_IF_ERROR(ValidateNodeShape(shape));
  FleetPlan plan;
  plan.shape = shape;
  ASSIGN_OR_RETURN(plan.items, SplitIntoReplicas(models, shape, file));
  plan.models = std::move(models);
  plan.lower_bound = ComputeLowerBound(plan.items, shape);
  return plan;
}

StatusOr<FleetPlan> MakeFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                  const std::string& file, const PackOptions& options) {
  ASSIGN_OR_RETURN(FleetPlan plan, PrepareFleetPlan(std::move(models), shape, file));
  const auto start = std::chrono::steady_clock::now();
  plan.packing = PackItems(plan.items, shape, options);
  plan.pack_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(CheckPacking(plan.packing, plan.items, shape));
  return plan;
}

StatusOr<FleetPlan> PrepareMixedFleetPlan(std::vector<ModelDemand> models,
                                          const std::vector<NodeType>& types, double headroom,
                                          const std::string& file, double replica_share) {
  RETURN_IF_ERROR(ValidateNodeTypes(types, headroom));
  FleetPlan plan;
  plan.types = types;
  plan.replica_share = replica_share;
  // The node-count bound over a node with the most cores and the most memory of any type.
  plan.shape.headroom = headroom;
  for (const NodeType& t : types) {
    plan.shape.cores = std::max(plan.shape.cores, t.cores);
    plan.shape.memory_bytes = std::max(plan.shape.memory_bytes, t.memory_bytes);
  }
  ASSIGN_OR_RETURN(plan.items, SplitIntoReplicas(models, plan.Shapes(), file, replica_share));
  // The bounds hold for every plan, so they count the fewest memory copies:
  // those of the coarsest split, not the extra ones of the plan's finer split.
  ASSIGN_OR_RETURN(auto fewest, SplitIntoReplicas(models, plan.Shapes(), file));
  plan.models = std::move(models);
  plan.lower_bound = ComputeLowerBound(fewest, plan.shape);
  plan.cost_bound = ComputeCostBound(fewest, types, headroom);
  return plan;
}

Status FinishFleetPlan(FleetPlan* plan) {
  RETURN_IF_ERROR(CheckPacking(plan->packing, plan->items, plan->Shapes()));
  plan->cost_per_hour = plan->mixed() ? PackingCost(plan->packing, plan->types) : 0;
  plan->packing.strong_lower_bound =
      std::max(plan->packing.strong_lower_bound, plan->lower_bound.nodes);
  return Status::Ok();
}

StatusOr<FleetPlan> MakeMixedFleetPlan(std::vector<ModelDemand> models,
                                       const std::vector<NodeType>& types, double headroom,
                                       const std::string& file, const PackOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FleetPlan plan;
  double cost = 0;
  for (double share : kReplicaShares) {
    ASSIGN_OR_RETURN(FleetPlan candidate,
                     PrepareMixedFleetPlan(models, types, headroom, file, share));
    MixedPacking mixed = PackMixed(candidate.items, types, headroom, options);
    if (!plan.items.empty() && mixed.cost >= cost - 1e-9) continue;  // ties: fewer copies
    cost = mixed.cost;
    candidate.packing = std::move(mixed.packing);
    candidate.best_single_type = mixed.best_single_type;
    candidate.best_single_type_cost = mixed.best_single_type_cost;
    plan = std::move(candidate);
  }
  plan.pack_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The one-shape planner on each type alone, for the comparison in the
  // report: the best single-type plan is the cheaper of its and the mixed
  // packer's own single-type candidate.
  for (size_t t = 0; t < types.size(); ++t) {
    auto single = MakeFleetPlan(plan.models, types[t].Shape(headroom), file, options);
    if (!single.ok()) continue;  // some model does not fit this type
    const double single_cost = static_cast<double>(single->packing.nodes.size()) * types[t].price;
    if (plan.best_single_type < 0 || single_cost < plan.best_single_type_cost) {
      plan.best_single_type = static_cast<int>(t);
      plan.best_single_type_cost = single_cost;
    }
  }
  RETURN_IF_ERROR(FinishFleetPlan(&plan));
  return plan;
}

}  // namespace inferd::plan
