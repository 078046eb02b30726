// NodeFacts: what the dashboard shows of the node that does not change while
// the server runs: the CPU budget, each step that narrowed it (its origin),
// and the core plan's executors. Made once at start-up from topology's plain
// data; plain data itself, safe to copy and read from any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/core_plan.h"
#include "topology/cpu_budget.h"

namespace inferd::dashboard {

struct ExecutorFacts {
  int id = 0;
  std::vector<int> cpus;  // OS cpu ids it is pinned to, one per physical core
  int num_threads = 0;
  int numa_node = 0;
};

struct NodeFacts {
  int usable_cores = 0;
  int available_cores = 0;  // before the cgroup quota
  int quota_cores = 0;      // 0 = no quota
  std::string usable_cpus;  // "0-3"
  // The budget's origin, step by step: {"machine", "8 cores, 16 PUs (this machine)"},
  // {"affinity", "0-15 (sched_getaffinity)"}, {"cgroup cpuset", ...}, {"--cpus", ...},
  // {"cgroup quota", ...}; a step that did not apply says so.
  std::vector<std::pair<std::string, std::string>> origin;
  std::vector<std::string> notes;  // the budget's and the plan's notes and warnings
  int group_size = 0;              // cores of a full executor
  std::vector<ExecutorFacts> executors;
};

NodeFacts DescribeNode(const topology::CpuBudget& budget, const topology::CorePlan& plan);

}  // namespace inferd::dashboard
