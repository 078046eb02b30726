#include "topology/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "topology/cpu_list.h"

namespace inferd::topology {
namespace {

std::vector<int> AllPus(const HardwareTopology& hw) {
  std::vector<int> pus;
  for (const auto& c : hw.cores) pus.insert(pus.end(), c.pus.begin(), c.pus.end());
  std::sort(pus.begin(), pus.end());
  return pus;
}

StatusOr<std::vector<int>> ProcessAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return Internal("sched_getaffinity failed: cannot read this process's allowed CPUs");
  }
  std::vector<int> cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  }
  return cpus;
}

std::string FormatCpus(double cpus) {
  std::ostringstream out;
  out << cpus;
  return out.str();
}

// Orders the available cores so that the first `limit` stay in the smallest
// locality domain that can hold `limit` cores: one (NUMA node, package) pair,
// else one package; the fullest domain first, ties to the lowest id.
void OrderForLocality(std::vector<UsableCore>* cores, int limit) {
  std::map<int, int> per_package;
  std::map<std::pair<int, int>, int> per_domain;  // (package, numa)
  for (const auto& c : *cores) {
    ++per_package[c.package];
    ++per_domain[{c.package, c.numa_node}];
  }
  auto key = [&](const UsableCore& c) {
    int domain = per_domain[{c.package, c.numa_node}];
    int package = per_package[c.package];
    return std::make_tuple(domain >= limit ? 0 : 1, package >= limit ? 0 : 1, -package, c.package,
                           -domain, c.numa_node, c.cpu);
  };
  std::stable_sort(cores->begin(), cores->end(),
                   [&](const UsableCore& a, const UsableCore& b) { return key(a) < key(b); });
}

}  // namespace

std::vector<int> CpuBudget::usable_cpus() const {
  std::vector<int> cpus;
  for (const auto& u : usable) cpus.push_back(u.cpu);
  return cpus;
}

StatusOr<CpuBudget> DetectCpuBudget(const DetectOptions& options) {
  CpuBudget b;
  ASSIGN_OR_RETURN(b.hardware, LoadHardwareTopology(options.hardware));
  const std::vector<int> all = AllPus(b.hardware);

  if (options.affinity) {
    std::vector<int> a = *options.affinity;
    std::sort(a.begin(), a.end());
    b.affinity = IntersectCpus(all, a);
  } else if (b.hardware.live) {
    ASSIGN_OR_RETURN(std::vector<int> a, ProcessAffinity());
    b.affinity = IntersectCpus(all, a);
    b.affinity_from_process = true;
  } else {
    b.affinity = all;
  }
  std::vector<int> allowed = b.affinity;
  if (allowed.size() < all.size()) {
    b.notes.push_back("affinity mask allows " + std::to_string(allowed.size()) + " of " +
                      std::to_string(all.size()) + " CPUs: " + FormatCpuList(allowed));
  }

  if (options.read_cgroups) b.cgroup = ReadCgroupLimits(options.cgroups);
  for (const auto& n : b.cgroup.notes) b.notes.push_back("cgroup: " + n);
  if (b.cgroup.cpuset) {
    std::vector<int> narrowed = IntersectCpus(allowed, *b.cgroup.cpuset);
    if (narrowed.size() < allowed.size()) {
      b.notes.push_back("cgroup cpuset " + FormatCpuList(*b.cgroup.cpuset) + " (" +
                        b.cgroup.cpuset_file + ") leaves " + FormatCpuList(narrowed));
    }
    allowed = std::move(narrowed);
  }

  if (!options.cpus.empty()) {
    auto flag = ParseCpuList(options.cpus);
    if (!flag.ok()) return flag.status().WithContext("--cpus");
    b.cpus_flag = *flag;
    std::vector<int> narrowed = IntersectCpus(allowed, *flag);
    if (narrowed.empty()) {
      return InvalidArgument("--cpus " + options.cpus +
                             ": none of these CPUs is usable (allowed: " + FormatCpuList(allowed) +
                             ")");
    }
    b.notes.push_back("--cpus " + options.cpus + " leaves " + FormatCpuList(narrowed));
    allowed = std::move(narrowed);
  }
  b.allowed_pus = allowed;
  if (allowed.empty()) {
    return Internal("no usable CPU: affinity " + FormatCpuList(b.affinity) + ", cgroup cpuset " +
                    (b.cgroup.cpuset ? FormatCpuList(*b.cgroup.cpuset) : "none") +
                    " do not intersect the hardware (" + FormatCpuList(all) + ")");
  }

  std::vector<UsableCore> available;
  int smt_dropped = 0;
  for (const auto& core : b.hardware.cores) {
    std::vector<int> pus = IntersectCpus(core.pus, allowed);
    if (pus.empty()) continue;
    smt_dropped += static_cast<int>(pus.size()) - 1;
    available.push_back({pus.front(), core.index, core.numa_node, core.package});
  }
  b.available_cores = static_cast<int>(available.size());
  if (smt_dropped > 0) {
    b.notes.push_back(std::to_string(smt_dropped) +
                      " SMT sibling(s) not counted: one thread per physical core");
  }

  int limit = b.available_cores;
  if (b.cgroup.quota) {
    b.quota_cores = b.cgroup.quota->whole_cpus();
    if (b.quota_cores < limit) {
      b.notes.push_back("CPU quota " + FormatCpus(b.cgroup.quota->cpus()) + " CPUs (" +
                        b.cgroup.quota->file + ") caps " + std::to_string(limit) +
                        " available cores to " + std::to_string(b.quota_cores));
      limit = b.quota_cores;
    }
  }
  OrderForLocality(&available, limit);
  available.resize(static_cast<size_t>(limit));
  b.usable = std::move(available);
  return b;
}

}  // namespace inferd::topology
