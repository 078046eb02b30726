// CpuBudget: the physical cores this process may use for compute, one OS cpu
// id per core, and every fact that decided it (for `inferd topology`).
//
// The budget is
//   hardware PUs  ∩ process affinity (sched_getaffinity)  ∩ cgroup cpuset
//                 ∩ --cpus LIST
// reduced to physical cores (a core counts once, however many of its SMT
// siblings are allowed; its lowest allowed PU is the one to pin), then capped by
// the cgroup CPU quota rounded down (at least 1). When the cap leaves a choice,
// cores are taken so as to stay inside one NUMA node, else one package: the
// smallest locality domain that holds them all, the fullest one first.
//
// DetectCpuBudget reads hwloc, sched_getaffinity and cgroup files once; the
// result is plain data, safe to copy and to read from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/cgroup_limits.h"
#include "topology/hardware_topology.h"

namespace inferd::topology {

struct DetectOptions {
  HardwareSource hardware;  // default: the live machine
  CgroupPaths cgroups;      // default: /proc and /sys/fs/cgroup
  bool read_cgroups = true;
  // The allowed OS cpu ids; nullopt = this process's affinity mask when the
  // topology is live, every PU of the topology otherwise. Tests inject it.
  std::optional<std::vector<int>> affinity;
  std::string cpus;  // `--cpus LIST` ("0-3,6"); empty = no narrowing
};

struct UsableCore {
  int cpu = 0;        // OS cpu id to pin a thread to (one PU of the core)
  int core = 0;       // PhysicalCore::index
  int numa_node = 0;  // -1 when unknown
  int package = 0;
};

struct CpuBudget {
  HardwareTopology hardware;
  std::vector<int> affinity;           // allowed OS cpu ids (after the hardware)
  bool affinity_from_process = false;  // read with sched_getaffinity
  CgroupLimits cgroup;
  std::optional<std::vector<int>> cpus_flag;  // --cpus, parsed
  std::vector<int> allowed_pus;               // all of the above intersected
  int available_cores = 0;                    // physical cores with an allowed PU
  int quota_cores = 0;                        // CpuQuota::whole_cpus(); 0 = no quota
  std::vector<UsableCore> usable;             // the budget, ordered as taken
  std::vector<std::string> notes;             // why cores were dropped, for display

  int usable_cores() const { return static_cast<int>(usable.size()); }
  std::vector<int> usable_cpus() const;
};

// kInvalidArgument for a malformed --cpus or one that leaves no CPU;
// kInternal when hwloc fails.
StatusOr<CpuBudget> DetectCpuBudget(const DetectOptions& options);

}  // namespace inferd::topology
