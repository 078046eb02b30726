// HardwareTopology: the machine's physical cores, their hardware threads (SMT
// siblings, "PUs"), NUMA nodes and packages, as hwloc sees them.
//
// Loaded from the live machine, from an hwloc XML export (`lstopo foo.xml`),
// or from a synthetic description such as "package:2 core:12 pu:2" (tests).
// The live load includes CPUs this process may not use: restricting to the
// allowed ones is CpuBudget's job, so that every limit is visible and testable.
// hwloc is used inside LoadHardwareTopology only; the result is plain data,
// safe to copy and to read from any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace inferd::topology {

struct PhysicalCore {
  int index = 0;         // hwloc logical index, 0..n-1 across the machine
  int package = 0;       // logical index of its package (socket); 0 when unknown
  int numa_node = 0;     // OS index of its NUMA node; -1 when none covers it
  std::vector<int> pus;  // OS cpu ids of its hardware threads, sorted
};

struct NumaNode {
  int os_index = 0;
  std::vector<int> pus;  // OS cpu ids it covers, sorted
};

struct HardwareTopology {
  std::string source;  // "this machine", "xml:FILE" or "synthetic:DESC"
  bool live = false;   // loaded from the running machine
  int num_packages = 0;
  std::vector<PhysicalCore> cores;  // ordered by logical index
  std::vector<NumaNode> numa_nodes;
  int num_pus() const;
  int max_pus_per_core() const;
};

struct HardwareSource {
  std::string xml_file;   // when set: load this hwloc XML export
  std::string synthetic;  // when set: load this synthetic description
  // Neither set: the live machine.
};

StatusOr<HardwareTopology> LoadHardwareTopology(const HardwareSource& source);

}  // namespace inferd::topology
