#include "plan/plan_command.h"

#include <chrono>
#include <fstream>

#include "plan/fleet_plan.h"
#include "plan/plan_report.h"
#include "plan/rebalance.h"

namespace inferd::plan {
namespace {

int Fail(std::ostream& err, const Status& s, const std::string& prefix = "") {
  err << "inferd plan: " << prefix << s.message() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

// The models of --from-metrics, written to --save-models when given and read
// back by the models file's own reader: what is saved is what is planned.
StatusOr<std::vector<ModelDemand>> MeasuredModels(const PlanCommandOptions& options,
                                                  std::string* source, std::ostream& err) {
  std::vector<ModelDemand> base;
  if (!options.models_file.empty()) {
    ASSIGN_OR_RETURN(base, LoadModelList(options.models_file));
  }
  if (!options.fetch_metrics) return Internal("--from-metrics: no HTTP client");
  err << "inferd plan: measuring traffic for " << options.metrics_window_s << " s from "
      << options.from_metrics.size() << " server(s)\n";
  ASSIGN_OR_RETURN(auto measured, MeasureTraffic(options.from_metrics, options.metrics_window_s,
                                                 options.fetch_metrics, base, options.models_file));
  const std::string text =
      FormatMeasuredModels(measured, options.from_metrics, options.metrics_window_s);
  *source = options.save_models.empty() ? "--from-metrics" : options.save_models;
  if (!options.save_models.empty()) {
    std::ofstream out(options.save_models);
    out << text;
    if (!out.flush()) return Internal("--save-models: cannot write " + options.save_models);
  }
  return ParseModelList(text, *source);
}

StatusOr<std::vector<NodeType>> NodeTypes(const PlanCommandOptions& options) {
  std::vector<NodeType> types;
  for (const std::string& flag : options.node_types) {
    ASSIGN_OR_RETURN(NodeType t, ParseNodeType(flag));
    types.push_back(std::move(t));
  }
  const bool shape_given = options.node_cores > 0 || !options.node_memory.empty();
  if (types.empty() || !shape_given) return types;
  // The one shape beside the types: a type of its own, which needs a price.
  if (!(options.node_price > 0)) {
    return InvalidArgument(
        "--node-cores/--node-memory beside --node-type need --node-price (per hour) to be "
        "compared with the types");
  }
  NodeType t;
  t.name = "default";
  t.cores = options.node_cores;
  ASSIGN_OR_RETURN(t.memory_bytes, ParseByteSize(options.node_memory));
  t.price = options.node_price;
  types.push_back(std::move(t));
  return types;
}

StatusOr<FleetPlan> MakePlan(std::vector<ModelDemand> models, const std::string& source,
                             const PlanCommandOptions& options) {
  ASSIGN_OR_RETURN(auto types, NodeTypes(options));
  NodeShape shape;
  shape.headroom = options.headroom;
  if (types.empty()) {
    if (!(options.node_cores > 0) || options.node_memory.empty()) {
      return InvalidArgument(
          "give --node-cores and --node-memory, or --node-type "
          "NAME:CORES:MEMORY:PRICE (repeatable)");
    }
    shape.cores = options.node_cores;
    auto memory = ParseByteSize(options.node_memory);
    if (!memory.ok()) return InvalidArgument("--node-memory: " + memory.status().message());
    shape.memory_bytes = *memory;
  }
  if (options.current_plan.empty()) {
    if (types.empty()) return MakeFleetPlan(std::move(models), shape, source);
    return MakeMixedFleetPlan(std::move(models), types, options.headroom, source);
  }
  ASSIGN_OR_RETURN(auto current, LoadCurrentPlan(options.current_plan));
  FleetPlan plan;
  if (types.empty()) {
    ASSIGN_OR_RETURN(plan, PrepareFleetPlan(std::move(models), shape, source));
  } else {
    ASSIGN_OR_RETURN(plan, PrepareMixedRebalance(models, types, options.headroom, source, current));
  }
  RebalanceOptions rebalance;
  rebalance.cost_target = options.rebalance_target;
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(Rebalance(current, options.current_plan, rebalance, &plan));
  plan.pack_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.from_metrics.empty()) {
    std::string source;
    auto models = MeasuredModels(options, &source, err);
    if (!models.ok()) return Fail(err, models.status());
    return RunPlanOnModels(std::move(models).value(), source, options, out, err);
  }
  auto models = LoadModelList(options.models_file);
  if (!models.ok()) {
    err << "inferd plan: " << models.status().message() << "\n";
    return 2;
  }
  return RunPlanOnModels(std::move(models).value(), options.models_file, options, out, err);
}

int RunPlanOnModels(std::vector<ModelDemand> models, const std::string& source,
                    const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto plan = MakePlan(std::move(models), source, options);
  if (!plan.ok()) return Fail(err, plan.status());
  if (!options.emit_k8s_dir.empty()) {
    Status s = EmitKubernetes(*plan, options.k8s, options.emit_k8s_dir);
    if (!s.ok()) return Fail(err, s, "--emit-k8s: ");
  }
  if (options.json) {
    WritePlanJson(*plan, out);
  } else {
    WritePlanText(*plan, out);
    if (!options.emit_k8s_dir.empty()) {
      out << "\nwrote the Kubernetes objects to " << options.emit_k8s_dir << "/\n";
    }
  }
  return 0;
}

}  // namespace inferd::plan
