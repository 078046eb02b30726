// The two forms of `inferd plan`'s answer.
//
// JSON (--json), exactly:
//   {"nodes": [{"name", "cores_used", "memory_used_bytes",
//               "models": [{"name", "rps", "cores", "memory_bytes"}]}],
//    "lower_bound_nodes": K}
// where a model split into replicas appears once per node holding a replica,
// with that replica's share of the rps and cores.
//
// Text: a summary (nodes, lower bound and the plan's distance from it, the
// method, replicas, time), a table of the nodes, then each node's models.
//
// Pure functions; thread-safe.
#pragma once

#include <ostream>

#include "plan/fleet_plan.h"

namespace inferd::plan {

void WritePlanJson(const FleetPlan& plan, std::ostream& out);
void WritePlanText(const FleetPlan& plan, std::ostream& out);

}  // namespace inferd::plan
