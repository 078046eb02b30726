#include "topology/core_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace inferd::topology {
namespace {

struct Domain {
  int package = 0;
  int numa_node = 0;
  std::vector<int> cpus;  // in budget order
};

// Splits the budget into (package, NUMA node) domains, in the order in which
// the budget first mentions them (the budget puts the preferred ones first).
std::vector<Domain> SplitIntoDomains(const std::vector<UsableCore>& cores) {
  std::vector<Domain> domains;
  std::map<std::pair<int, int>, size_t> index;
  for (const auto& c : cores) {
    auto [it, inserted] = index.try_emplace({c.package, c.numa_node}, domains.size());
    if (inserted) domains.push_back({c.package, c.numa_node, {}});
    domains[it->second].cpus.push_back(c.cpu);
  }
  return domains;
}

int AskedThreads(const config::ModelConfig& m, const PlanOptions& options) {
  return m.instances.automatic ? options.auto_threads : std::max(1, m.instances.threads);
}

std::string Describe(const config::ModelConfig& m, const PlanOptions& options) {
  if (m.instances.automatic) {
    return "model '" + m.name + "' (instances: auto, " + std::to_string(options.auto_threads) +
           " thread(s) per instance)";
  }
  return "model '" + m.name + "' (instances: {count: " + std::to_string(m.instances.count) +
         ", threads: " + std::to_string(m.instances.threads) + "})";
}

}  // namespace

int CorePlan::total_threads() const {
  int n = 0;
  for (const auto& e : executors) n += e.num_threads;
  return n;
}

const PlannedModel* CorePlan::FindModel(const std::string& name) const {
  for (const auto& m : models) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

StatusOr<CorePlan> MakeCorePlan(const std::vector<UsableCore>& cores,
                                const std::vector<config::ModelConfig>& models,
                                const PlanOptions& raw_options) {
  if (cores.empty()) return FailedPrecondition("core plan: the CPU budget has no usable core");
  PlanOptions options = raw_options;
  options.auto_threads = std::max(1, options.auto_threads);

  CorePlan plan;
  plan.usable_cores = static_cast<int>(cores.size());
  const std::vector<Domain> domains = SplitIntoDomains(cores);
  int largest_domain = 0;
  for (const auto& d : domains) largest_domain = std::max<int>(largest_domain, d.cpus.size());

  // g: the largest ask, so that every model fits on every full executor.
  int g = models.empty() ? options.auto_threads : 1;
  const config::ModelConfig* widest = nullptr;
  int smallest_ask = models.empty() ? g : std::numeric_limits<int>::max();
  for (const auto& m : models) {
    int t = AskedThreads(m, options);
    if (t > g) {
      g = t;
      widest = &m;
    }
    smallest_ask = std::min(smallest_ask, t);
  }
  if (g > largest_domain) {
    plan.warnings.push_back(
        (widest ? Describe(*widest, options) + " asks " : std::string("auto asks ")) +
        std::to_string(g) + " threads per instance, but an executor's cores must share one NUMA " +
        "node and package and the largest such group in the budget has " +
        std::to_string(largest_domain) + " of " + std::to_string(cores.size()) +
        " usable cores: executors get " + std::to_string(largest_domain) + " threads");
    g = largest_domain;
  }
  plan.group_size = g;

  // Cut each domain into groups of g; a remainder becomes a smaller executor
  // only when some model asks for that few threads.
  for (const auto& d : domains) {
    size_t pos = 0;
    while (pos < d.cpus.size()) {
      size_t size = std::min<size_t>(g, d.cpus.size() - pos);
      if (static_cast<int>(size) < g && static_cast<int>(size) < smallest_ask) {
        plan.notes.push_back(std::to_string(size) + " core(s) of NUMA node " +
                             std::to_string(d.numa_node) + " left idle: no model asks for " +
                             std::to_string(size) + " thread(s) or fewer, and executors of " +
                             std::to_string(g) + " cores never straddle NUMA nodes");
        break;
      }
      PlannedExecutor e;
      e.id = static_cast<int>(plan.executors.size());
      e.cores.assign(d.cpus.begin() + pos, d.cpus.begin() + pos + size);
      e.num_threads = static_cast<int>(size);
      e.numa_node = d.numa_node;
      e.package = d.package;
      plan.executors.push_back(std::move(e));
      pos += size;
    }
  }

  int narrower = 0;
  for (const auto& m : models) {
    PlannedModel pm;
    pm.name = m.name;
    pm.automatic = m.instances.automatic;
    pm.requested_count = m.instances.automatic ? 0 : m.instances.count;
    pm.requested_threads = AskedThreads(m, options);
    int t = std::min(pm.requested_threads, g);
    for (const auto& e : plan.executors) {
      if (e.num_threads >= t) pm.executor_ids.push_back(e.id);
    }
    const int eligible = static_cast<int>(pm.executor_ids.size());
    if (m.instances.automatic) {
      pm.max_concurrency = eligible;
    } else {
      int count = std::max(1, m.instances.count);
      if (count > eligible) {
        plan.warnings.push_back(
            Describe(m, options) + " asks for " + std::to_string(count * pm.requested_threads) +
            " cores; the budget of " + std::to_string(cores.size()) + " usable cores has " +
            std::to_string(eligible) + " executor(s) of >= " + std::to_string(t) +
            " cores: max_concurrency clamped to " + std::to_string(eligible));
      }
      pm.max_concurrency = std::min(count, eligible);
    }
    if (pm.requested_threads < g) ++narrower;
    plan.models.push_back(std::move(pm));
  }
  if (narrower > 0) {
    plan.notes.push_back(std::to_string(narrower) +
                         " model(s) ask fewer threads than the executors have (" +
                         std::to_string(g) + ", the largest ask" +
                         (widest ? ", by model '" + widest->name + "'" : std::string()) +
                         "); they also run on the larger executors");
  }
  return plan;
}

}  // namespace inferd::topology
