#include "plan/plan_report.h"

#include <cstdio>
#include <string>

#include "common/json_writer.h"

namespace inferd::plan {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Percent(double part, double whole) {
  return whole > 0 ? Fixed(100.0 * part / whole, 1) + "%" : "-";
}

}  // namespace

void WritePlanJson(const FleetPlan& plan, std::ostream& out) {
  JsonWriter w;
  w.BeginObject().Key("nodes").BeginArray();
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    const NodeLoad& node = plan.packing.nodes[n];
    w.BeginObject();
    w.Key("name").String(plan.NodeName(n));
    w.Key("cores_used").Double(node.cores);
    w.Key("memory_used_bytes").Int(node.memory_bytes);
    w.Key("models").BeginArray();
    for (int i : node.items) {
      const PackItem& it = plan.items[i];
      w.BeginObject();
      w.Key("name").String(plan.models[it.model].name);
      w.Key("rps").Double(it.rps);
      w.Key("cores").Double(it.cores);
      w.Key("memory_bytes").Int(it.memory_bytes);
      w.EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();
  w.Key("lower_bound_nodes").Int(plan.lower_bound.nodes);
  w.EndObject();
  out << w.str() << "\n";
}

void WritePlanText(const FleetPlan& plan, std::ostream& out) {
  const NodeShape& shape = plan.shape;
  const Packing& p = plan.packing;
  const size_t nodes = p.nodes.size();
  int split_models = 0;
  for (const PackItem& it : plan.items) split_models += it.replica == 0 && it.replicas > 1;
  out << "inferd plan: " << plan.models.size() << " models on " << nodes << " nodes";
  if (split_models > 0) {
    out << " (" << split_models << " split into replicas; " << plan.items.size()
        << " replicas in all)";
  }
  out << "\n";
  out << "node: " << Fixed(shape.cores, 2) << " cores, " << FormatBytesShort(shape.memory_bytes)
      << "; usable at headroom " << Fixed(shape.headroom, 2) << ": "
      << Fixed(shape.usable_cores(), 2) << " cores, " << FormatBytesShort(shape.usable_memory())
      << "\n";
  const int lb = plan.lower_bound.nodes;
  out << "lower bound: " << lb << " nodes (cores fill " << Fixed(plan.lower_bound.core_nodes, 2)
      << " nodes, memory " << Fixed(plan.lower_bound.memory_nodes, 2) << "); plan: " << nodes
      << " nodes, " << (static_cast<int>(nodes) - lb) << " over ("
      << Percent(static_cast<double>(nodes) - lb, lb) << ")";
  if (p.optimal) out << "; optimal";
  out << "\n";
  if (p.strong_lower_bound > lb) {
    out << "  (" << p.strong_lower_bound
        << " replicas each need over half a node: no plan has fewer than " << p.strong_lower_bound
        << " nodes)\n";
  }
  out << "method: " << p.method << " (alone, first-fit decreasing: " << p.first_fit_nodes
      << " nodes, dot product: " << p.dot_product_nodes << "); packed in "
      << Fixed(plan.pack_seconds, 3) << " s\n\n";

  char line[160];
  std::snprintf(line, sizeof line, "%-12s %7s %18s %20s\n", "node", "models", "cores used",
                "memory used");
  out << line;
  for (size_t n = 0; n < nodes; ++n) {
    const NodeLoad& node = p.nodes[n];
    const std::string cores =
        Fixed(node.cores, 2) + " (" + Percent(node.cores, shape.usable_cores()) + ")";
    const std::string memory = FormatBytesShort(node.memory_bytes) + " (" +
                               Percent(static_cast<double>(node.memory_bytes),
                                       static_cast<double>(shape.usable_memory())) +
                               ")";
    std::snprintf(line, sizeof line, "%-12s %7zu %18s %20s\n", plan.NodeName(n).c_str(),
                  node.items.size(), cores.c_str(), memory.c_str());
    out << line;
  }
  out << "(percentages of the usable share)\n";
  for (size_t n = 0; n < nodes; ++n) {
    out << "\n" << plan.NodeName(n) << ":\n";
    for (int i : p.nodes[n].items) {
      const PackItem& it = plan.items[i];
      std::string name = plan.models[it.model].name;
      if (it.replicas > 1) {
        name +=
            " [replica " + std::to_string(it.replica + 1) + "/" + std::to_string(it.replicas) + "]";
      }
      std::snprintf(line, sizeof line, "  %-32s rps %-10s cores %-8s memory %s\n", name.c_str(),
                    Fixed(it.rps, 2).c_str(), Fixed(it.cores, 3).c_str(),
                    FormatBytesShort(it.memory_bytes).c_str());
      out << line;
    }
  }
}

}  // namespace inferd::plan
