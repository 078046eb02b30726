#include "plan/plan_report.h"

#include <cstdio>
#include <string>

#include "common/json_writer.h"
#include "common/text_format.h"

namespace inferd::plan {
namespace {

std::string Percent(double part, double whole) {
  return whole > 0 ? FormatFixed(100.0 * part / whole, 1) + "%" : "-";
}

void WriteMixedSummary(const FleetPlan& plan, std::ostream& out) {
  const Packing& p = plan.packing;
  out << "node types (usable at headroom " << FormatFixed(plan.shape.headroom, 2) << "):";
  for (const NodeType& t : plan.types) {
    const NodeShape s = t.Shape(plan.shape.headroom);
    out << " " << t.name << " " << FormatFixed(t.cores, 2) << " cores "
        << FormatBytesShort(t.memory_bytes) << " at " << FormatFixed(t.price, 4) << "/h ("
        << FormatFixed(s.usable_cores(), 2) << ", " << FormatBytesShort(s.usable_memory()) << ");";
  }
  out << "\n";
  const double bound = plan.cost_bound.cost;
  out << "cost: " << FormatFixed(plan.cost_per_hour, 2) << "/h; lower bound "
      << FormatFixed(bound, 2) << "/h (the fractional mix:";
  for (size_t t = 0; t < plan.types.size(); ++t) {
    if (plan.cost_bound.nodes[t] > 0) {
      out << " " << FormatFixed(plan.cost_bound.nodes[t], 2) << " x " << plan.types[t].name;
    }
  }
  out << "); plan at " << (bound > 0 ? FormatFixed(plan.cost_per_hour / bound, 3) : "-")
      << "x the bound\n";
  out << "mix:";
  for (size_t t = 0; t < plan.types.size(); ++t) {
    int count = 0;
    for (const NodeLoad& node : p.nodes) count += node.type == static_cast<int>(t);
    out << " " << count << " x " << plan.types[t].name << " ("
        << FormatFixed(count * plan.types[t].price, 2) << "/h);";
  }
  out << " " << p.nodes.size() << " nodes (no plan has fewer than " << plan.lower_bound.nodes
      << ")\n";
  if (plan.best_single_type >= 0) {
    out << "the best single type: " << plan.types[plan.best_single_type].name << " alone, "
        << FormatFixed(plan.best_single_type_cost, 2) << "/h\n";
  } else {
    out << "no single type holds every model\n";
  }
  out << "method: " << p.method << "; replicas of at most " << FormatFixed(plan.replica_share, 2)
      << " of the largest type that holds the model; packed in "
      << FormatFixed(plan.pack_seconds, 3) << " s\n";
}

void WriteRebalanceSummary(const FleetPlan& plan, std::ostream& out) {
  const RebalanceSummary& r = plan.rebalance;
  if (!r.done) return;
  const size_t models = plan.models.size();
  out << "rebalanced from " << r.current_file << " (" << r.current_nodes << " nodes, "
      << r.overloaded_nodes << " past their usable share at this load): kept " << r.kept_nodes
      << " nodes; moved " << r.moved.models << " of " << models << " models ("
      << Percent(r.moved.models, static_cast<double>(models)) << ", "
      << FormatBytesShort(r.moved.memory_bytes) << ")\n";
  out << "  a plan from scratch: " << r.from_scratch_nodes << " nodes";
  if (plan.mixed()) out << ", " << FormatFixed(r.from_scratch_cost, 2) << "/h";
  out << ", would move " << r.from_scratch.models << " models ("
      << Percent(r.from_scratch.models, static_cast<double>(models)) << ", "
      << FormatBytesShort(r.from_scratch.memory_bytes) << ")\n";
}

}  // namespace

void WritePlanJson(const FleetPlan& plan, std::ostream& out) {
  JsonWriter w;
  w.BeginObject().Key("nodes").BeginArray();
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    const NodeLoad& node = plan.packing.nodes[n];
    w.BeginObject();
    w.Key("name").String(plan.NodeName(n));
    if (plan.mixed()) w.Key("type").String(plan.types[node.type].name);
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
  if (plan.mixed()) {
    w.Key("cost_per_hour").Double(plan.cost_per_hour);
    w.Key("lower_bound_cost_per_hour").Double(plan.cost_bound.cost);
    w.Key("node_types").BeginArray();
    for (size_t t = 0; t < plan.types.size(); ++t) {
      const NodeType& type = plan.types[t];
      int count = 0;
      for (const NodeLoad& node : plan.packing.nodes) count += node.type == static_cast<int>(t);
      w.BeginObject();
      w.Key("name").String(type.name);
      w.Key("cores").Double(type.cores);
      w.Key("memory_bytes").Int(type.memory_bytes);
      w.Key("price_per_hour").Double(type.price);
      w.Key("nodes").Int(count);
      w.Key("lower_bound_nodes").Double(plan.cost_bound.nodes[t]);  // the LP's fractional mix
      w.EndObject();
    }
    w.EndArray();
  }
  if (plan.rebalance.done) {
    const RebalanceSummary& r = plan.rebalance;
    w.Key("rebalance").BeginObject();
    w.Key("current_nodes").Int(r.current_nodes);
    w.Key("kept_nodes").Int(r.kept_nodes);
    w.Key("overloaded_nodes").Int(r.overloaded_nodes);
    w.Key("moved_models").Int(r.moved.models);
    w.Key("moved_memory_bytes").Int(r.moved.memory_bytes);
    w.Key("from_scratch_moved_models").Int(r.from_scratch.models);
    w.Key("from_scratch_moved_memory_bytes").Int(r.from_scratch.memory_bytes);
    w.Key("from_scratch_nodes").Int(r.from_scratch_nodes);
    if (plan.mixed()) w.Key("from_scratch_cost_per_hour").Double(r.from_scratch_cost);
    w.EndObject();
  }
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
  if (plan.mixed()) {
    WriteMixedSummary(plan, out);
  } else {
    out << "node: " << FormatFixed(shape.cores, 2) << " cores, "
        << FormatBytesShort(shape.memory_bytes) << "; usable at headroom "
        << FormatFixed(shape.headroom, 2) << ": " << FormatFixed(shape.usable_cores(), 2)
        << " cores, " << FormatBytesShort(shape.usable_memory()) << "\n";
    const int lb = plan.lower_bound.nodes;
    out << "lower bound: " << lb << " nodes (cores fill "
        << FormatFixed(plan.lower_bound.core_nodes, 2) << " nodes, memory "
        << FormatFixed(plan.lower_bound.memory_nodes, 2) << "); plan: " << nodes << " nodes, "
        << (static_cast<int>(nodes) - lb) << " over ("
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
        << FormatFixed(plan.pack_seconds, 3) << " s\n";
  }
  WriteRebalanceSummary(plan, out);
  out << "\n";

  char line[160];
  // The type column only in mixed plans: a one-shape report stays as it was.
  const int type_width = plan.mixed() ? 15 : 0;
  std::snprintf(line, sizeof line, "%-12s %-*s%7s %18s %20s\n", "node", type_width,
                plan.mixed() ? "type" : "", "models", "cores used", "memory used");
  out << line;
  for (size_t n = 0; n < nodes; ++n) {
    const NodeLoad& node = p.nodes[n];
    const NodeShape node_shape = plan.ShapeOf(n);
    const std::string cores =
        FormatFixed(node.cores, 2) + " (" + Percent(node.cores, node_shape.usable_cores()) + ")";
    const std::string memory = FormatBytesShort(node.memory_bytes) + " (" +
                               Percent(static_cast<double>(node.memory_bytes),
                                       static_cast<double>(node_shape.usable_memory())) +
                               ")";
    const std::string type = plan.mixed() ? plan.types[node.type].name : "";
    std::snprintf(line, sizeof line, "%-12s %-*s%7zu %18s %20s\n", plan.NodeName(n).c_str(),
                  type_width, type.c_str(), node.items.size(), cores.c_str(), memory.c_str());
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
                    FormatFixed(it.rps, 2).c_str(), FormatFixed(it.cores, 3).c_str(),
                    FormatBytesShort(it.memory_bytes).c_str());
      out << line;
    }
  }
}

}  // namespace inferd::plan
