// The memory budget of the model cache: `--memory-budget SIZE|auto`, parsed
// here, and the process's resident memory, read here.
//
// SIZE is bytes, or a number with a binary suffix: K, M, G, T (also written
// KiB, MiB, GiB, TiB; 1K = 1024), e.g. 512M or 1.5G. `auto` is
// kAutoBudgetFraction of the memory this process may use: the tightest
// cgroup limit on its path (v2 memory.max, v1 memory.limit_in_bytes), or the
// machine's MemTotal when no cgroup limits it. The rest is left for the
// server's own base, request bodies, activations and the allocator's slack.
//
// Every file read goes through the two roots of MemoryPaths, so tests point
// them at a fake tree. Pure functions of the files; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/byte_size.h"
#include "common/status.h"

namespace inferd::repository {

inline constexpr double kAutoBudgetFraction = 0.7;

struct MemoryPaths {
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

// SIZE as common/byte_size.h parses it ("512M" -> 536870912).
using ::inferd::ParseByteSize;

struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;  // "cgroup v1 .../memory.limit_in_bytes", "MemTotal", for the log
};
// The memory this process may use, as described above. kUnavailable when not
// even MemTotal can be read.
StatusOr<MemoryLimit> ReadMemoryLimit(const MemoryPaths& paths = {});

// The tightest cgroup memory limit on this process's path (v2 memory.max,
// v1 memory.limit_in_bytes); nullopt when none limits it.
std::optional<MemoryLimit> ReadCgroupMemoryLimit(const MemoryPaths& paths = {});

// `--memory-budget` text -> bytes (0 = no budget: "" or "0" or "none").
// `note` (may be null) receives a line for the log saying where `auto` came from.
StatusOr<int64_t> ResolveMemoryBudget(std::string_view text, std::string* note = nullptr,
                                      const MemoryPaths& paths = {});

// Resident set size of this process in bytes (/proc/self/statm); 0 if unreadable.
int64_t ReadResidentBytes(const MemoryPaths& paths = {});

// The process's peak resident set size since the previous call (VmHWM of
// /proc/self/status, then reset to the current size through
// /proc/self/clear_refs); 0 when either is refused, so that a lifetime peak
// is never taken for a recent one.
int64_t TakePeakResidentBytes(const MemoryPaths& paths = {});

// 1536 -> "1.5 KiB", for messages.
using ::inferd::FormatBytes;

}  // namespace inferd::repository
