// Renders what was detected (CpuBudget) and what was planned (CorePlan), as
// text for people and logs, or as JSON for tools and tests. Used by
// `inferd topology` and by the server's start-up log.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <ostream>

#include "topology/core_plan.h"
#include "topology/cpu_budget.h"

namespace inferd::topology {

// Several lines, each ending in '\n'.
void WriteTopologyText(const CpuBudget& budget, const CorePlan& plan, std::ostream& out);

// One JSON object and a '\n'. Keys: source, packages, numa_nodes
// [{os_index, cpus}], cores [{index, package, numa_node, pus}], smt_per_core,
// affinity, affinity_source, cpuset (list or null), cpuset_file, quota
// ({cpus, quota_us, period_us, whole_cpus, file} or null), cpus_flag (list or
// null), allowed_cpus, available_cores, usable_cores, usable_cpus,
// group_size, total_threads, executors [{id, cores, threads, numa_node,
// package}], models [{name, instances ("auto" or {count, threads}),
// max_concurrency, executors}], warnings, notes.
void WriteTopologyJson(const CpuBudget& budget, const CorePlan& plan, std::ostream& out);

}  // namespace inferd::topology
