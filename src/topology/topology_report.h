// Renders what was detected (CpuBudget) and what was planned (CorePlan), as
// text for people and logs, or as JSON for tools and tests. Used by
// `inferd topology` and by the server's start-up log.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "topology/core_plan.h"
#include "topology/cpu_budget.h"

namespace inferd::topology {

// What a model adds to the report beyond its plan, measured after planning
// (`inferd topology --calibrate`: its batch calibration, profile/).
struct ModelAnnotation {
  std::string json_key;           // added to the model's JSON object...
  std::string json_value;         // ...with this value (one complete JSON value)
  std::vector<std::string> text;  // lines printed under the model
  std::string error;              // non-empty: the model failed; the message names it
};

// Annotations of the plan's models (same order as CorePlan::models) and every
// failure of the run (an annotation's error, a config left out), one message each.
struct PlanAnnotations {
  std::vector<ModelAnnotation> models;
  std::vector<std::string> errors;
};

// Several lines, each ending in '\n'.
// With `annotations`: each model's text lines under it, then the errors.
void WriteTopologyText(const CpuBudget& budget, const CorePlan& plan, std::ostream& out,
                       const PlanAnnotations* annotations = nullptr);

// One JSON object and a '\n'. Keys: source, packages, numa_nodes
// [{os_index, cpus}], cores [{index, package, numa_node, pus}], smt_per_core,
// affinity, affinity_source, cpuset (list or null), cpuset_file, quota
// ({cpus, quota_us, period_us, whole_cpus, file} or null), cpus_flag (list or
// null), allowed_cpus, available_cores, usable_cores, usable_cpus,
// group_size, total_threads, executors [{id, cores, threads, numa_node,
// package}], models [{name, instances ("auto" or {count, threads}),
// max_concurrency, executors}], warnings, notes. With `annotations` (and only
// then): each model's json_key, and model_errors [string] after notes.
void WriteTopologyJson(const CpuBudget& budget, const CorePlan& plan, std::ostream& out,
                       const PlanAnnotations* annotations = nullptr);

}  // namespace inferd::topology
