#include "plan/fleet_plan.h"

#include <chrono>
#include <cstdio>

namespace inferd::plan {

std::string FleetPlan::NodeName(size_t index) const {
  int width = 4;
  for (size_t n = packing.nodes.size(); n >= 10000; n /= 10) ++width;
  char buf[32];
  std::snprintf(buf, sizeof buf, "node-%0*zu", width, index + 1);
  return buf;
}

StatusOr<FleetPlan> MakeFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                  const std::string& file, const PackOptions& options) {
  RETURN_IF_ERROR(ValidateNodeShape(shape));
  FleetPlan plan;
  plan.shape = shape;
  ASSIGN_OR_RETURN(plan.items, SplitIntoReplicas(models, shape, file));
  plan.models = std::move(models);
  plan.lower_bound = ComputeLowerBound(plan.items, shape);
  const auto start = std::chrono::steady_clock::now();
  plan.packing = PackItems(plan.items, shape, options);
  plan.pack_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(CheckPacking(plan.packing, plan.items, shape));
  return plan;
}

}  // namespace inferd::plan
