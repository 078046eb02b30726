// FleetPlan: the whole answer of `inferd plan` (models, node shape, replicas,
// packing, lower bound), made once and read by the reports and the Kubernetes
// emitter.
//
// Pure data plus one function; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "plan/model_list.h"
#include "plan/replica_split.h"
#include "plan/vector_packer.h"

namespace inferd::plan {

struct FleetPlan {
  std::vector<ModelDemand> models;
  NodeShape shape;
  std::vector<PackItem> items;  // replicas, in model order
  Packing packing;
  LowerBound lower_bound;
  double pack_seconds = 0;  // wall time of the packing, for the report

  // "node-0001": the plan's name for node `index` (0-based), zero-padded to at
  // least four digits so names sort in order.
  std::string NodeName(size_t index) const;
};

// Splits, packs and checks. kInvalidArgument (with the file's line) when a
// model fits on no node; kInternal if the packing breaks a constraint (a bug).
StatusOr<FleetPlan> MakeFleetPlan(std::vector<ModelDemand> models, const NodeShape& shape,
                                  const std::string& file, const PackOptions& options = {});

}  // namespace inferd::plan
