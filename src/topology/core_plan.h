// CorePlan: the CPU budget cut into executors (core groups) shared by all
// models, and for each model which executors may run it and how many at once.
//
// Policy (docs/CORE_PLAN.md has the reasoning and the measurements):
//  - Executors are shared by every model; a model gets a cap, not threads of
//    its own. A thousand models therefore cost no more threads than one.
//  - Group size g = the largest `threads` any model asks for: a manual model's
//    `instances: {count, threads}`, an `instances: auto` model's
//    PlanOptions::auto_threads (default 1: one core per executor, because
//    throughput scales with instances for the models measured: MobileNetV3
//    2 x 1 thread = 317 img/s vs 1 x 2 = 132). With no model, g = auto_threads.
//  - A group never straddles a NUMA node or a package. g is clamped to the
//    largest such domain in the budget (with a warning). Each domain is cut into
//    groups of g cores; what is left of a domain (fewer than g cores) becomes
//    one smaller executor when some model asks for that few threads, and stays
//    idle otherwise (with a note).
//  - A model that asks t threads may run on every executor of at least t cores
//    (auto models: auto_threads); `max_concurrency` = its `count` (auto: all of
//    those executors), clamped to how many there are, with a warning that says
//    what was asked and what the budget allows.
//  - Invariant: the executors' threads add up to at most the usable cores, and
//    each usable core is in at most one executor, for any number of models.
//
// Plain data and pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/model_config.h"
#include "topology/cpu_budget.h"

namespace inferd::topology {

// One executor thread with an intra-op pool of `num_threads` threads, member i
// pinned to cores[i]. Maps 1:1 onto scheduler::ExecutorSpec{cores, num_threads}.
struct PlannedExecutor {
  int id = 0;              // index in CorePlan::executors
  std::vector<int> cores;  // OS cpu ids, one per physical core
  int num_threads = 0;     // == cores.size()
  int numa_node = 0;       // -1 when unknown
  int package = 0;
};

// Maps onto scheduler::ModelSpec{max_concurrency, executor_ids}.
struct PlannedModel {
  std::string name;
  bool automatic = true;
  int requested_count = 0;        // manual only
  int requested_threads = 0;      // manual: `threads`; auto: PlanOptions::auto_threads
  int max_concurrency = 0;        // >= 1: executors that may run it at once
  std::vector<int> executor_ids;  // executors that may run it (non-empty)
};

struct CorePlan {
  int usable_cores = 0;
  int group_size = 0;  // g, cores of a full executor
  std::vector<PlannedExecutor> executors;
  std::vector<PlannedModel> models;   // in the order given
  std::vector<std::string> warnings;  // a request was clamped: what was asked, what is allowed
  std::vector<std::string> notes;     // informational (idle cores, larger groups than asked)

  int total_threads() const;
  // nullptr when no model has that name.
  const PlannedModel* FindModel(const std::string& name) const;
};

struct PlanOptions {
  // Cores per executor that an `instances: auto` model asks for. 1 favours
  // throughput; a latency-bound deployment may raise it.
  int auto_threads = 1;
};

// `cores`: the budget (CpuBudget::usable), in the budget's order. Models use
// ModelConfig::name and ::instances only. kFailedPrecondition when `cores` is
// empty.
StatusOr<CorePlan> MakeCorePlan(const std::vector<UsableCore>& cores,
                                const std::vector<config::ModelConfig>& models,
                                const PlanOptions& options = {});

}  // namespace inferd::topology
