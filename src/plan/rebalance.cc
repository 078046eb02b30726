#include "plan/rebalance.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "plan/internal/bin_elimination.h"
#include "plan/internal/mixed_fill.h"

namespace inferd::plan {
namespace {

using internal::Bin;
using internal::Capacity;
using internal::ItemSize;
using internal::MixedNodeTypes;

Status NotAPlan(const std::string& file, const std::string& why) {
  return InvalidArgument(file + ": not the --json of `inferd plan`: " + why);
}

// The running nodes that hold each model, by model name, in the file's order.
std::unordered_map<std::string, std::vector<int>> HoldersByName(
    const std::vector<CurrentNode>& current) {
  std::unordered_map<std::string, std::vector<int>> holders;
  for (size_t c = 0; c < current.size(); ++c) {
    for (const std::string& m : current[c].models) {
      auto& list = holders[m];
      if (list.empty() || list.back() != static_cast<int>(c)) list.push_back(static_cast<int>(c));
    }
  }
  return holders;
}

// Names for the nodes without one: node-NNNN numbers no running node uses.
void NameNewNodes(const std::vector<CurrentNode>& current, std::vector<std::string>* names) {
  std::set<std::string> used;
  for (const CurrentNode& c : current) used.insert(c.name);
  for (const std::string& n : *names) used.insert(n);
  int next = 1;
  for (std::string& n : *names) {
    if (!n.empty()) continue;
    char buf[32];
    do {
      std::snprintf(buf, sizeof buf, "node-%04d", next++);
    } while (used.count(buf));
    n = buf;
    used.insert(n);
  }
}

// The replicas that leave a running node so that the rest (left in `items`)
// fit `cap`. While it is over: the smallest replica that alone ends the
// overload (one move, and the easiest replica to place elsewhere), else the
// one that frees the most of what is over per byte moved.
std::vector<int> Shed(std::vector<int>* items, const Capacity& cap,
                      const std::vector<ItemSize>& sizes) {
  double cores = 0;
  int64_t memory = 0;
  for (int i : *items) {
    cores += sizes[i].cores;
    memory += sizes[i].memory;
  }
  const double cap_memory = static_cast<double>(cap.memory);
  std::vector<int> shed;
  while (cores > cap.cores * (1 + internal::kCoreTolerance) || memory > cap.memory) {
    const bool over_cores = cores > cap.cores * (1 + internal::kCoreTolerance);
    const bool over_memory = memory > cap.memory;
    size_t best = 0;
    bool best_ends = false;
    double best_key = 0;
    for (size_t k = 0; k < items->size(); ++k) {
      const ItemSize& s = sizes[(*items)[k]];
      const bool ends = cores - s.cores <= cap.cores * (1 + internal::kCoreTolerance) &&
                        memory - s.memory <= cap.memory;
      // Ending: smaller is better; not ending: more freed per byte is better.
      const double key = ends ? -(s.cores / cap.cores + static_cast<double>(s.memory) / cap_memory)
                              : ((over_cores ? s.cores / cap.cores : 0) +
                                 (over_memory ? static_cast<double>(s.memory) / cap_memory : 0)) /
                                    std::max(static_cast<double>(s.memory), 1.0);
      if (k == 0 || (ends && !best_ends) || (ends == best_ends && key > best_key)) {
        best = k;
        best_ends = ends;
        best_key = key;
      }
    }
    const int i = (*items)[best];
    cores -= sizes[i].cores;
    memory -= sizes[i].memory;
    shed.push_back(i);
    (*items)[best] = items->back();
    items->pop_back();
  }
  return shed;
}

Packing RebalancedPacking(const std::vector<Bin>& bins, const std::vector<PackItem>& items) {
  Packing p;
  for (const Bin& b : bins) {
    NodeLoad n;
    n.items = b.items;
    std::sort(n.items.begin(), n.items.end());
    n.type = b.type;
    for (int i : n.items) {
      n.cores += items[i].cores;
      n.memory_bytes += items[i].memory_bytes;
    }
    p.nodes.push_back(std::move(n));
  }
  return p;
}

// A fresh plan of `plan`'s replicas, the way `inferd plan` without --current makes it.
Packing PackFromScratch(const FleetPlan& plan, const std::vector<int>& subset,
                        const PackOptions& options) {
  std::vector<PackItem> items;
  for (int i : subset) items.push_back(plan.items[i]);
  Packing p = plan.mixed() ? PackMixed(items, plan.types, plan.shape.headroom, options).packing
                           : PackItems(items, plan.shape, options);
  for (NodeLoad& n : p.nodes) {
    for (int& i : n.items) i = subset[i];
  }
  return p;
}

// Matches the nodes of a fresh plan to running nodes of the same type, most
// memory in common first, and names them after their match.
std::vector<std::string> MatchNames(const FleetPlan& plan,
                                    const std::vector<CurrentNode>& current) {
  const auto holders = HoldersByName(current);
  std::map<std::pair<int, int>, int64_t> common;  // (node, running node) -> bytes in common
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    const NodeLoad& node = plan.packing.nodes[n];
    const std::string type = plan.mixed() ? plan.types[node.type].name : "";
    for (int i : node.items) {
      auto it = holders.find(plan.models[plan.items[i].model].name);
      if (it == holders.end()) continue;
      for (int c : it->second) {
        if (current[c].type == type) common[{static_cast<int>(n), c}] += plan.items[i].memory_bytes;
      }
    }
  }
  std::vector<std::pair<int64_t, std::pair<int, int>>> pairs;
  for (const auto& [key, bytes] : common) pairs.push_back({bytes, key});
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> names(plan.packing.nodes.size());
  std::vector<char> taken(current.size(), 0);
  for (const auto& [bytes, key] : pairs) {
    const auto [n, c] = key;
    if (!names[n].empty() || taken[c]) continue;
    names[n] = current[c].name;
    taken[c] = 1;
  }
  NameNewNodes(current, &names);
  return names;
}

}  // namespace

StatusOr<std::vector<CurrentNode>> ParseCurrentPlan(const std::string& text,
                                                    const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return NotAPlan(file, e.what());
  }
  if (!root.IsMap() || !root["nodes"] || !root["nodes"].IsSequence()) {
    return NotAPlan(file, "no \"nodes\" list");
  }
  std::vector<CurrentNode> nodes;
  std::set<std::string> names;
  for (const YAML::Node& n : root["nodes"]) {
    const std::string where = "node " + std::to_string(nodes.size() + 1);
    if (!n.IsMap() || !n["name"] || !n["name"].IsScalar() || !n["models"] ||
        !n["models"].IsSequence()) {
      return NotAPlan(file, where + " has no \"name\" or \"models\"");
    }
    CurrentNode node;
    node.name = n["name"].Scalar();
    if (!names.insert(node.name).second) {
      return NotAPlan(file, "the node name '" + node.name + "' appears twice");
    }
    if (n["type"]) {
      if (!n["type"].IsScalar()) return NotAPlan(file, where + ": \"type\" is not a string");
      node.type = n["type"].Scalar();
    }
    for (const YAML::Node& m : n["models"]) {
      if (!m.IsMap() || !m["name"] || !m["name"].IsScalar()) {
        return NotAPlan(file, node.name + ": a model without a \"name\"");
      }
      node.models.push_back(m["name"].Scalar());
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

StatusOr<std::vector<CurrentNode>> LoadCurrentPlan(const std::string& file) {
  std::ifstream in(file);
  if (!in) return InvalidArgument(file + ": cannot read the running plan");
  std::stringstream text;
  text << in.rdbuf();
  return ParseCurrentPlan(text.str(), file);
}

StatusOr<FleetPlan> PrepareMixedRebalance(const std::vector<ModelDemand>& models,
                                          const std::vector<NodeType>& types, double headroom,
                                          const std::string& file,
                                          const std::vector<CurrentNode>& current) {
  const auto holders = HoldersByName(current);
  FleetPlan best;
  int best_matching = -1;
  for (double share : kReplicaShares) {
    ASSIGN_OR_RETURN(FleetPlan plan, PrepareMixedFleetPlan(models, types, headroom, file, share));
    int matching = 0;
    for (const PackItem& it : plan.items) {
      if (it.replica != 0) continue;
      auto h = holders.find(plan.models[it.model].name);
      matching += h != holders.end() && static_cast<int>(h->second.size()) == it.replicas;
    }
    if (matching > best_matching) {
      best_matching = matching;
      best = std::move(plan);
    }
  }
  return best;
}

MoveCount CountMoves(const FleetPlan& plan, const std::vector<std::string>& names,
                     const std::vector<CurrentNode>& current) {
  std::unordered_map<std::string, std::set<std::string>> held;  // model -> running node names
  for (const CurrentNode& c : current) {
    for (const std::string& m : c.models) held[m].insert(c.name);
  }
  MoveCount moved;
  std::vector<char> counted(plan.models.size(), 0);
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    const std::string name = n < names.size() ? names[n] : plan.NodeName(n);
    for (int i : plan.packing.nodes[n].items) {
      const PackItem& it = plan.items[i];
      auto h = held.find(plan.models[it.model].name);
      if (h == held.end() || h->second.count(name)) continue;  // new to the list, or stays
      moved.memory_bytes += it.memory_bytes;
      if (!counted[it.model]) {
        counted[it.model] = 1;
        ++moved.models;
      }
    }
  }
  return moved;
}

Status Rebalance(const std::vector<CurrentNode>& current, const std::string& current_file,
                 const RebalanceOptions& options, FleetPlan* plan) {
  const std::vector<PackItem>& items = plan->items;
  std::vector<double> prices;
  for (size_t t = 0; t < plan->Shapes().size(); ++t) {
    prices.push_back(plan->mixed() ? plan->types[t].price : 1.0);
  }
  const MixedNodeTypes types = internal::MakeMixedNodeTypes(plan->Shapes(), prices, items);
  const std::vector<ItemSize> sizes = internal::MixedSizes(items, types);

  // 1. The running nodes, and each replica's node in the running plan.
  std::vector<Bin> bins(current.size());
  std::vector<std::string> names;
  for (size_t c = 0; c < current.size(); ++c) {
    names.push_back(current[c].name);
    if (!plan->mixed()) {
      if (!current[c].type.empty()) {
        return InvalidArgument(current_file + ": node " + current[c].name + " has the type '" +
                               current[c].type +
                               "': plan over the same --node-type flags as the running plan");
      }
      continue;
    }
    auto t = std::find_if(plan->types.begin(), plan->types.end(),
                          [&](const NodeType& type) { return type.name == current[c].type; });
    if (t == plan->types.end()) {
      return InvalidArgument(current_file + ": node " + current[c].name + " has the type '" +
                             current[c].type + "', which no --node-type names");
    }
    bins[c].type = static_cast<int>(t - plan->types.begin());
  }
  const auto holders = HoldersByName(current);
  std::vector<std::vector<int>> wanted(bins.size());
  std::vector<int> pool;
  for (size_t i = 0; i < items.size(); ++i) {
    auto h = holders.find(plan->models[items[i].model].name);
    const size_t r = static_cast<size_t>(items[i].replica);
    if (h != holders.end() && r < h->second.size()) {
      wanted[h->second[r]].push_back(static_cast<int>(i));
    } else {
      pool.push_back(static_cast<int>(i));
    }
  }

  // 2. Each running node keeps what fits at the new load.
  int overloaded = 0;
  for (size_t b = 0; b < bins.size(); ++b) {
    const std::vector<int> shed = Shed(&wanted[b], types.caps[bins[b].type], sizes);
    overloaded += !shed.empty();
    pool.insert(pool.end(), shed.begin(), shed.end());
    for (int i : wanted[b]) Place(bins[b], i, sizes[i]);
  }

  // 3. The pool, largest first, into the fullest running node it fits.
  std::stable_sort(pool.begin(), pool.end(),
                   [&](int x, int y) { return sizes[x].sum() > sizes[y].sum(); });
  std::vector<int> left;
  for (int i : pool) {
    int best = -1;
    double best_fill = -1;
    for (size_t b = 0; b < bins.size(); ++b) {
      const Capacity& cap = types.caps[bins[b].type];
      if (!Fits(cap, bins[b], sizes[i]) || HoldsGroup(bins[b], sizes[i], sizes)) continue;
      const double fill =
          (bins[b].cores + sizes[i].cores) / cap.cores +
          static_cast<double>(bins[b].memory + sizes[i].memory) / static_cast<double>(cap.memory);
      if (fill > best_fill) {
        best_fill = fill;
        best = static_cast<int>(b);
      }
    }
    if (best >= 0) {
      Place(bins[best], i, sizes[i]);
    } else {
      left.push_back(i);
    }
  }
  std::sort(left.begin(), left.end());
  if (!left.empty()) {
    for (const NodeLoad& n : PackFromScratch(*plan, left, options.pack).nodes) {
      Bin b;
      b.type = n.type;
      for (int i : n.items) Place(b, i, sizes[i]);
      bins.push_back(std::move(b));
      names.emplace_back();
    }
  }
  for (size_t b = bins.size(); b-- > 0;) {
    if (bins[b].items.empty()) {
      bins.erase(bins.begin() + static_cast<long>(b));
      names.erase(names.begin() + static_cast<long>(b));
    }
  }

  // 4. Fewer nodes while the plan is over the target; new nodes take their cheapest type.
  const double bound = plan->mixed() ? plan->cost_bound.cost : plan->lower_bound.nodes;
  internal::EliminationOptions elimination;
  elimination.prices = types.prices;
  elimination.stop_cost = options.cost_target * bound;
  elimination.max_attempts = options.pack.elimination_attempts;
  elimination.on_remove = [&](int b) { names.erase(names.begin() + b); };
  // New nodes first: their replicas move anyway, so emptying one moves only
  // what its replicas displace. Then any node.
  elimination.skip = [&](int b) { return !names[b].empty(); };
  internal::EliminateBins(sizes, types.caps, elimination, &bins);
  elimination.skip = nullptr;
  internal::EliminateBins(sizes, types.caps, elimination, &bins);
  for (size_t b = 0; b < bins.size(); ++b) {
    if (!names[b].empty()) continue;
    std::vector<Bin> one(1);
    std::swap(one[0], bins[b]);
    internal::RetypeBins(types, &one);
    std::swap(one[0], bins[b]);
  }
  NameNewNodes(current, &names);

  plan->packing = RebalancedPacking(bins, items);
  plan->packing.method = "rebalance: running nodes keep what fits, the rest best fit" +
                         std::string(left.empty() ? "" : ", new nodes packed") +
                         ", then bin elimination down to " +
                         std::to_string(options.cost_target).substr(0, 4) + "x the bound";
  plan->node_names = names;
  RETURN_IF_ERROR(FinishFleetPlan(plan));

  RebalanceSummary& r = plan->rebalance;
  r.done = true;
  r.current_file = current_file;
  r.current_nodes = static_cast<int>(current.size());
  r.overloaded_nodes = overloaded;
  std::set<std::string> running;
  for (const CurrentNode& c : current) running.insert(c.name);
  for (const std::string& n : names) r.kept_nodes += running.count(n) > 0;
  r.moved = CountMoves(*plan, names, current);

  FleetPlan scratch = *plan;
  std::vector<int> all(items.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  scratch.packing = PackFromScratch(*plan, all, options.pack);
  scratch.node_names.clear();
  r.from_scratch_nodes = static_cast<int>(scratch.packing.nodes.size());
  r.from_scratch_cost = plan->mixed() ? PackingCost(scratch.packing, plan->types) : 0;
  r.from_scratch = CountMoves(scratch, MatchNames(scratch, current), current);
  return Status::Ok();
}

}  // namespace inferd::plan
