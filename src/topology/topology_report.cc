#include "topology/topology_report.h"

#include "topology/cpu_list.h"
#include "common/json_writer.h"

namespace inferd::topology {
namespace {

constexpr size_t kMaxCoresListed = 64;  // past this the text shows a summary only

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string AffinitySource(const CpuBudget& b) {
  if (b.affinity_from_process) return "sched_getaffinity";
  return b.hardware.live ? "given" : "all CPUs of the topology";
}

std::string Instances(const PlannedModel& m) {
  if (m.automatic) return "auto";
  return "{count: " + std::to_string(m.requested_count) +
         ", threads: " + std::to_string(m.requested_threads) + "}";
}

}  // namespace

void WriteTopologyText(const CpuBudget& b, const CorePlan& plan, std::ostream& out,
                       const PlanAnnotations* annotations) {
  const HardwareTopology& hw = b.hardware;
  out << "Hardware (" << hw.source << "): " << Plural(hw.num_packages, "package") << ", "
      << Plural(static_cast<int>(hw.numa_nodes.size()), "NUMA node") << ", "
      << Plural(static_cast<int>(hw.cores.size()), "physical core") << ", "
      << Plural(hw.num_pus(), "hardware thread") << " (up to " << hw.max_pus_per_core()
      << " per core)\n";
  for (const auto& n : hw.numa_nodes) {
    out << "  NUMA node " << n.os_index << ": cpus " << FormatCpuList(n.pus) << "\n";
  }
  if (hw.cores.size() <= kMaxCoresListed) {
    for (const auto& c : hw.cores) {
      out << "  core " << c.index << ": package " << c.package << ", NUMA node " << c.numa_node
          << ", cpus " << FormatCpuList(c.pus) << "\n";
    }
  }
  out << "Affinity:      " << FormatCpuList(b.affinity) << " (" << AffinitySource(b) << ")\n";
  out << "Cgroup cpuset: "
      << (b.cgroup.cpuset ? FormatCpuList(*b.cgroup.cpuset) + " (" + b.cgroup.cpuset_file + ")"
                          : std::string("none"))
      << "\n";
  out << "CPU quota:     ";
  if (b.cgroup.quota) {
    const CpuQuota& q = *b.cgroup.quota;
    out << q.cpus() << " CPUs = " << q.quota_us << "/" << q.period_us << " us (" << q.file
        << "), counts as " << q.whole_cpus() << "\n";
  } else {
    out << "none\n";
  }
  out << "--cpus:        " << (b.cpus_flag ? FormatCpuList(*b.cpus_flag) : std::string("not given"))
      << "\n";
  out << "Usable cores:  " << b.usable_cores() << " (cpus " << FormatCpuList(b.usable_cpus())
      << "; " << b.available_cores << " physical cores allowed)\n";
  for (const auto& n : b.notes) out << "  note: " << n << "\n";

  out << "Plan: " << Plural(static_cast<int>(plan.executors.size()), "executor") << ", "
      << plan.total_threads() << " compute threads for " << plan.usable_cores
      << " usable cores (group size " << plan.group_size << ")\n";
  for (const auto& e : plan.executors) {
    out << "  executor " << e.id << ": " << Plural(e.num_threads, "thread") << " on cpus "
        << FormatCpuList(e.cores) << " (NUMA node " << e.numa_node << ", package " << e.package
        << ")\n";
  }
  if (!plan.models.empty()) out << "Models:\n";
  for (size_t i = 0; i < plan.models.size(); ++i) {
    const PlannedModel& m = plan.models[i];
    out << "  " << m.name << ": instances " << Instances(m) << " -> up to " << m.max_concurrency
        << " at once on executors " << FormatCpuList(m.executor_ids) << "\n";
    if (annotations && i < annotations->models.size()) {
      for (const auto& line : annotations->models[i].text) out << "    " << line << "\n";
    }
  }
  for (const auto& w : plan.warnings) out << "  warning: " << w << "\n";
  for (const auto& n : plan.notes) out << "  note: " << n << "\n";
  if (annotations) {
    for (const auto& e : annotations->errors) out << "Error: " << e << "\n";
  }
}

void WriteTopologyJson(const CpuBudget& b, const CorePlan& plan, std::ostream& out,
                       const PlanAnnotations* annotations) {
  const HardwareTopology& hw = b.hardware;
  JsonWriter w;
  w.BeginObject();
  w.Key("source").String(hw.source);
  w.Key("packages").Int(hw.num_packages);
  w.Key("numa_nodes").BeginArray();
  for (const auto& n : hw.numa_nodes) {
    w.BeginObject().Key("os_index").Int(n.os_index).Key("cpus").IntArray(n.pus).EndObject();
  }
  w.EndArray();
  w.Key("cores").BeginArray();
  for (const auto& c : hw.cores) {
    w.BeginObject().Key("index").Int(c.index).Key("package").Int(c.package);
    w.Key("numa_node").Int(c.numa_node).Key("pus").IntArray(c.pus).EndObject();
  }
  w.EndArray();
  w.Key("smt_per_core").Int(hw.max_pus_per_core());
  w.Key("affinity").IntArray(b.affinity);
  w.Key("affinity_source").String(AffinitySource(b));
  w.Key("cpuset");
  if (b.cgroup.cpuset) {
    w.IntArray(*b.cgroup.cpuset);
  } else {
    w.Null();
  }
  w.Key("cpuset_file").String(b.cgroup.cpuset_file);
  w.Key("quota");
  if (b.cgroup.quota) {
    const CpuQuota& q = *b.cgroup.quota;
    w.BeginObject().Key("cpus").Double(q.cpus()).Key("quota_us").Int(q.quota_us);
    w.Key("period_us").Int(q.period_us).Key("whole_cpus").Int(q.whole_cpus());
    w.Key("file").String(q.file).EndObject();
  } else {
    w.Null();
  }
  w.Key("cpus_flag");
  if (b.cpus_flag) {
    w.IntArray(*b.cpus_flag);
  } else {
    w.Null();
  }
  w.Key("allowed_cpus").IntArray(b.allowed_pus);
  w.Key("available_cores").Int(b.available_cores);
  w.Key("usable_cores").Int(b.usable_cores());
  w.Key("usable_cpus").IntArray(b.usable_cpus());
  w.Key("group_size").Int(plan.group_size);
  w.Key("total_threads").Int(plan.total_threads());
  w.Key("executors").BeginArray();
  for (const auto& e : plan.executors) {
    w.BeginObject().Key("id").Int(e.id).Key("cores").IntArray(e.cores);
    w.Key("threads").Int(e.num_threads).Key("numa_node").Int(e.numa_node);
    w.Key("package").Int(e.package).EndObject();
  }
  w.EndArray();
  w.Key("models").BeginArray();
  for (size_t i = 0; i < plan.models.size(); ++i) {
    const PlannedModel& m = plan.models[i];
    w.BeginObject().Key("name").String(m.name).Key("instances");
    if (m.automatic) {
      w.String("auto");
    } else {
      w.BeginObject().Key("count").Int(m.requested_count);
      w.Key("threads").Int(m.requested_threads).EndObject();
    }
    w.Key("max_concurrency").Int(m.max_concurrency);
    w.Key("executors").IntArray(m.executor_ids);
    if (annotations && i < annotations->models.size()) {
      const ModelAnnotation& a = annotations->models[i];
      if (!a.json_key.empty()) {
        w.Key(a.json_key);
        if (a.json_value.empty()) {
          w.Null();
        } else {
          w.BeginRawValue() += a.json_value;
        }
      }
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("warnings").BeginArray();
  for (const auto& s : plan.warnings) w.String(s);
  w.EndArray();
  w.Key("notes").BeginArray();
  for (const auto& s : b.notes) w.String(s);
  for (const auto& s : plan.notes) w.String(s);
  w.EndArray();
  if (annotations) {
    w.Key("model_errors").BeginArray();
    for (const auto& s : annotations->errors) w.String(s);
    w.EndArray();
  }
  w.EndObject();
  out << w.str() << "\n";
}

}  // namespace inferd::topology
