// CPU time read from /proc: the whole process, and the executors' threads.
//
// An executor thread names itself `inferd-exec-<id>` (scheduler.cc), and the
// threads it starts (its OpenMP intra-op team) inherit that name, so summing
// the CPU time of the threads with that name gives what one executor used,
// its intra-op threads included. Tick resolution (1/CLK_TCK s, 10 ms here).
// Reading is a few small files per thread: cheap at one call a second.
// Thread-safety: pure readers; any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace inferd::dashboard {

// "inferd-exec-3" -> 3; nullopt for any other thread name.
std::optional<int> ExecutorIdFromThreadName(std::string_view comm);

// utime + stime of /proc/<...>/stat text, in seconds; nullopt when not a stat line.
std::optional<double> CpuSecondsFromStat(std::string_view stat_text);

// CPU seconds of `proc_self` (e.g. "/proc/self"); 0 when unreadable.
double ProcessCpuSeconds(const std::string& proc_self);

// Executor id -> CPU seconds of the threads that carry its name, from
// `proc_self`/task/*; threads that end while being read are skipped.
std::map<int, double> ExecutorCpuSeconds(const std::string& proc_self);

}  // namespace inferd::dashboard
