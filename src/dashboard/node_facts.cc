#include "dashboard/node_facts.h"

#include <cstdio>

#include "topology/cpu_list.h"

namespace inferd::dashboard {

NodeFacts DescribeNode(const topology::CpuBudget& budget, const topology::CorePlan& plan) {
  using topology::FormatCpuList;
  NodeFacts n;
  n.usable_cores = budget.usable_cores();
  n.available_cores = budget.available_cores;
  n.quota_cores = budget.quota_cores;
  n.usable_cpus = FormatCpuList(budget.usable_cpus());
  const auto& hw = budget.hardware;
  n.origin.emplace_back("machine", std::to_string(hw.cores.size()) + " cores, " +
                                       std::to_string(hw.num_pus()) + " PUs (" + hw.source + ")");
  n.origin.emplace_back(
      "affinity", FormatCpuList(budget.affinity) +
                      (budget.affinity_from_process ? " (sched_getaffinity)" : " (every PU)"));
  n.origin.emplace_back("cgroup cpuset", budget.cgroup.cpuset
                                             ? FormatCpuList(*budget.cgroup.cpuset) + " (" +
                                                   budget.cgroup.cpuset_file + ")"
                                             : std::string("not limited"));
  n.origin.emplace_back(
      "--cpus", budget.cpus_flag ? FormatCpuList(*budget.cpus_flag) : std::string("not given"));
  if (budget.cgroup.quota) {
    char cpus[32];
    std::snprintf(cpus, sizeof(cpus), "%.2f", budget.cgroup.quota->cpus());
    n.origin.emplace_back("cgroup quota", std::string(cpus) + " CPUs -> " +
                                              std::to_string(budget.quota_cores) + " cores (" +
                                              budget.cgroup.quota->file + ")");
  } else {
    n.origin.emplace_back("cgroup quota", "none");
  }
  n.origin.emplace_back("budget", std::to_string(n.usable_cores) + " of " +
                                      std::to_string(n.available_cores) + " allowed cores: cpus " +
                                      n.usable_cpus);
  n.notes = budget.notes;
  n.notes.insert(n.notes.end(), budget.cgroup.notes.begin(), budget.cgroup.notes.end());
  n.notes.insert(n.notes.end(), plan.warnings.begin(), plan.warnings.end());
  n.notes.insert(n.notes.end(), plan.notes.begin(), plan.notes.end());
  n.group_size = plan.group_size;
  for (const auto& e : plan.executors)
    n.executors.push_back({e.id, e.cores, e.num_threads, e.numa_node});
  return n;
}

}  // namespace inferd::dashboard
