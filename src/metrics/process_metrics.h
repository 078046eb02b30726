// Process metrics: what the kernel says about this process, sampled on every
// /metrics scrape, under the names Prometheus client libraries use
// (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds), plus page faults
// (inferd_process_page_faults_total{kind="minor|major"}: the allocator's
// steady state shows here; a warm server should add none per request) and,
// where the cgroup's cpu.stat exists, CPU throttling
// (inferd_cgroup_cpu_periods_total, inferd_cgroup_cpu_throttled_periods_total,
// inferd_cgroup_cpu_throttled_seconds_total).
//
// Parsing is split from reading so tests feed it text. Thread-safety: the
// parse functions are pure; the collector installed by ExportProcessMetrics
// serialises its own updates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "metrics/registry.h"

namespace inferd::metrics {

// From /proc/<pid>/stat.
struct ProcessStat {
  uint64_t minor_faults = 0;  // field 10, minflt
  uint64_t major_faults = 0;  // field 12, majflt
  uint64_t utime_ticks = 0;   // field 14
  uint64_t stime_ticks = 0;   // field 15
  uint64_t start_ticks = 0;   // field 22, since boot
  uint64_t vsize_bytes = 0;   // field 23
  uint64_t rss_pages = 0;     // field 24
};

// nullopt when the text is not a stat line (the command name, field 2, may
// hold spaces and parentheses: fields are counted from the last ')').
std::optional<ProcessStat> ParseProcessStat(std::string_view text);

// From a cgroup's cpu.stat: v2 (nr_periods, nr_throttled, throttled_usec) or
// v1 (nr_periods, nr_throttled, throttled_time in ns).
struct CpuThrottling {
  uint64_t periods = 0;
  uint64_t throttled_periods = 0;
  double throttled_seconds = 0;
};
std::optional<CpuThrottling> ParseCpuStat(std::string_view text);

struct ProcessMetricsOptions {
  std::string proc_self = "/proc/self";
  std::string cpu_stat_file;  // empty: no throttling series
};

// Registers the series above and adds a collector to `registry` that
// refreshes them on each scrape. The collector holds pointers into `registry`
// only, so it lives exactly as long as the registry.
void ExportProcessMetrics(Registry& registry, const ProcessMetricsOptions& options = {});

}  // namespace inferd::metrics
