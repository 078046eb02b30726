// ExportPlanMetrics: publishes the CPU budget and the core plan as gauges, so
// that a scrape shows what the server decided at start-up:
//   inferd_cpu_usable_cores, inferd_cpu_available_cores,
//   inferd_cpu_quota_cores (0 = no quota), inferd_executors,
//   inferd_executor_threads{executor, cpus, numa_node},
//   inferd_model_max_concurrency{model}.
//
// Header-only so that inferd_topology does not depend on inferd_metrics; the
// caller (which owns the Registry) links both. Thread-safe as Registry is.
#pragma once

#include <string>

#include "metrics/registry.h"
#include "topology/core_plan.h"
#include "topology/cpu_budget.h"
#include "topology/cpu_list.h"

namespace inferd::topology {

inline void ExportPlanMetrics(const CpuBudget& budget, const CorePlan& plan,
                              metrics::Registry& registry) {
  registry.GetGauge("inferd_cpu_usable_cores", "Physical cores in the CPU budget")
      .Set(budget.usable_cores());
  registry
      .GetGauge("inferd_cpu_available_cores",
                "Physical cores allowed by affinity, cpuset and --cpus, before the quota")
      .Set(budget.available_cores);
  registry.GetGauge("inferd_cpu_quota_cores", "Whole CPUs of the cgroup CPU quota; 0 = none")
      .Set(budget.quota_cores);
  registry.GetGauge("inferd_executors", "Executor threads of the core plan")
      .Set(static_cast<double>(plan.executors.size()));
  for (const auto& e : plan.executors) {
    registry
        .GetGauge("inferd_executor_threads", "Intra-op threads of an executor, one per core",
                  {{"executor", std::to_string(e.id)},
                   {"cpus", FormatCpuList(e.cores)},
                   {"numa_node", std::to_string(e.numa_node)}})
        .Set(e.num_threads);
  }
  for (const auto& m : plan.models) {
    registry
        .GetGauge("inferd_model_max_concurrency", "Executors that may run a model at once",
                  {{"model", m.name}})
        .Set(m.max_concurrency);
  }
}

}  // namespace inferd::topology
