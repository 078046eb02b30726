// The two forms of `inferd plan`'s answer.
//
// JSON (--json), exactly:
//   {"nodes": [{"name", "cores_used", "memory_used_bytes",
//               "models": [{"name", "rps", "cores", "memory_bytes"}]}],
//    "lower_bound_nodes": K}
// where a model split into replicas appears once per node holding a replica,
// with that replica's share of the rps and cores. A plan over node types
// (--node-type) adds "type" to each node and, at the top level,
// "cost_per_hour", "lower_bound_cost_per_hour" and "node_types": [{"name",
// "cores", "memory_bytes", "price_per_hour", "nodes", "lower_bound_nodes"
// (the LP's fractional mix)}]. A rebalance (--current) adds "rebalance":
// {"current_nodes", "kept_nodes", "overloaded_nodes", "moved_models",
// "moved_memory_bytes", "from_scratch_moved_models",
// "from_scratch_moved_memory_bytes", "from_scratch_nodes"[,
// "from_scratch_cost_per_hour"]}.
//
// Text: a summary (nodes, lower bound and the plan's distance from it, the
// method, replicas, time; with types the cost, its bound, the mix and the best
// single type; with a rebalance the models moved against a plan from scratch),
// a table of the nodes, then each node's models.
//
// Pure functions; thread-safe.
#pragma once

#include <ostream>

#include "plan/fleet_plan.h"

namespace inferd::plan {

void WritePlanJson(const FleetPlan& plan, std::ostream& out);
void WritePlanText(const FleetPlan& plan, std::ostream& out);

}  // namespace inferd::plan
