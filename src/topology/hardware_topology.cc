#include "topology/hardware_topology.h"

#include <hwloc.h>

#include <algorithm>
#include <memory>

namespace inferd::topology {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::vector<int> OsIds(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  std::vector<int> ids;
  hwloc_obj_t pu = nullptr;
  while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_PU, pu)) != nullptr) {
    ids.push_back(static_cast<int>(pu->os_index));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

StatusOr<TopologyPtr> Load(const HardwareSource& source) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return Internal("hwloc: cannot initialise a topology");
  TopologyPtr topo(raw);
  if (!source.synthetic.empty()) {
    if (hwloc_topology_set_synthetic(raw, source.synthetic.c_str()) != 0) {
      return InvalidArgument("hwloc: bad synthetic topology '" + source.synthetic +
                             "' (expected e.g. 'package:2 core:12 pu:2')");
    }
  } else if (!source.xml_file.empty()) {
    if (hwloc_topology_set_xml(raw, source.xml_file.c_str()) != 0) {
      return InvalidArgument("hwloc: cannot read topology XML '" + source.xml_file + "'");
    }
  } else {
    // Keep the CPUs our cgroup forbids in view: CpuBudget applies the limits
    // itself so that each one is reported.
    hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  }
  if (hwloc_topology_load(raw) != 0) return Internal("hwloc: cannot load the topology");
  return topo;
}

}  // namespace

int HardwareTopology::num_pus() const {
  int n = 0;
  for (const auto& c : cores) n += static_cast<int>(c.pus.size());
  return n;
}

int HardwareTopology::max_pus_per_core() const {
  size_t n = 0;
  for (const auto& c : cores) n = std::max(n, c.pus.size());
  return static_cast<int>(n);
}

StatusOr<HardwareTopology> LoadHardwareTopology(const HardwareSource& source) {
  ASSIGN_OR_RETURN(TopologyPtr topo, Load(source));
  hwloc_topology_t t = topo.get();
  HardwareTopology hw;
  if (!source.synthetic.empty()) {
    hw.source = "synthetic:" + source.synthetic;
  } else if (!source.xml_file.empty()) {
    hw.source = "xml:" + source.xml_file;
  } else {
    hw.source = "this machine";
    hw.live = true;
  }
  hw.num_packages = std::max(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE));

  int num_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  std::vector<hwloc_obj_t> nodes;
  for (int i = 0; i < num_nodes; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
    nodes.push_back(node);
    hw.numa_nodes.push_back({static_cast<int>(node->os_index), OsIds(t, node->cpuset)});
  }

  // Platforms without Core objects (rare) get one core per PU.
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  int num_cores = hwloc_get_nbobjs_by_type(t, core_type);
  for (int i = 0; i < num_cores; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, core_type, i);
    PhysicalCore core;
    core.index = i;
    core.pus = OsIds(t, obj->cpuset);
    if (core.pus.empty()) continue;
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, obj);
    core.package = pkg ? static_cast<int>(pkg->logical_index) : 0;
    core.numa_node = -1;
    for (hwloc_obj_t node : nodes) {
      if (hwloc_bitmap_isincluded(obj->cpuset, node->cpuset)) {
        core.numa_node = static_cast<int>(node->os_index);
        break;
      }
    }
    hw.cores.push_back(std::move(core));
  }
  if (hw.cores.empty()) return Internal("hwloc: the topology (" + hw.source + ") has no CPUs");
  return hw;
}

}  // namespace inferd::topology
