// CPU lists in the kernel's "cpulist" format ("0-3,8,10-11"), as found in
// cgroup cpuset files, /sys/devices/system/cpu/online and taskset -c.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::topology {

// Parses "0-3,8,10-11" into sorted, de-duplicated OS cpu ids. Whitespace and a
// trailing newline are ignored; an empty (or all-blank) list gives an empty
// vector. Malformed input ("3-1", "a", "1,,2") is kInvalidArgument naming the
// offending part.
StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// Formats sorted ids back into the compact form: {0,1,2,3,8} -> "0-3,8".
// An empty list formats as "".
std::string FormatCpuList(const std::vector<int>& cpus);

// Sorted intersection of two sorted lists.
std::vector<int> IntersectCpus(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace inferd::topology
