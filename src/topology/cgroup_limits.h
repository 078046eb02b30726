// CgroupLimits: the CPU limits a container runtime puts on this process through
// cgroups: the cpuset (which CPUs) and the CPU quota (how much CPU time).
//
// Both cgroup v2 (cpu.max, cpuset.cpus.effective) and v1 (cpu.cfs_quota_us /
// cpu.cfs_period_us, cpuset.effective_cpus or cpuset.cpus) are read, as are
// hybrid mounts (v2 at <cgroup_root>/unified). The process's own cgroup comes
// from <proc_root>/self/cgroup. When that path does not exist under the mount
// (a container without a cgroup namespace sees the host's path), leading
// components are dropped until it does. Quotas are taken as the tightest along
// the path from the process's cgroup up to the mount root, since a parent's
// limit applies to its children.
//
// Every file read goes through the two roots, so tests point them at a fake
// tree in a temporary directory. Missing files mean "no limit", never an error;
// malformed ones are ignored with a note. Pure function of the files; safe to
// call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferd::topology {

struct CgroupPaths {
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

struct CpuQuota {
  int64_t quota_us = 0;
  int64_t period_us = 0;
  std::string file;  // where it was read, for display

  double cpus() const { return static_cast<double>(quota_us) / static_cast<double>(period_us); }
  // Whole CPUs the quota pays for: rounded down, at least 1 (a 0.5-CPU
  // container still runs one thread at a time).
  int whole_cpus() const;
};

struct CgroupLimits {
  std::optional<std::vector<int>> cpuset;  // sorted OS cpu ids; nullopt = not limited
  std::string cpuset_file;
  std::optional<CpuQuota> quota;   // nullopt = unlimited ("max" or -1)
  // The cpu controller's cpu.stat of the process's own cgroup (throttling
  // counts, for /metrics); empty when there is none.
  std::string cpu_stat_file;
  std::vector<std::string> notes;  // files that could not be parsed, and why
};

CgroupLimits ReadCgroupLimits(const CgroupPaths& paths);

// Parses one cpu.max line ("max 100000", "200000 100000"). nullopt = no limit
// or malformed (then `error` says why when given).
std::optional<CpuQuota> ParseCpuMax(const std::string& text, std::string* error = nullptr);
// Parses v1 cpu.cfs_quota_us and cpu.cfs_period_us contents (-1 = no limit).
std::optional<CpuQuota> ParseCfsQuota(const std::string& quota_text, const std::string& period_text,
                                      std::string* error = nullptr);

}  // namespace inferd::topology
