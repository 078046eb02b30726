#include "plan/plan_command.h"

#include "plan/fleet_plan.h"
#include "plan/plan_report.h"

namespace inferd::plan {

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto models = LoadModelList(options.models_file);
  if (!models.ok()) {
    err << "inferd plan: " << models.status().message() << "\n";
    return 2;
  }
  return RunPlanOnModels(std::move(models).value(), options.models_file, options, out, err);
}

int RunPlanOnModels(std::vector<ModelDemand> models, const std::string& source,
                    const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  NodeShape shape;
  shape.cores = options.node_cores;
  shape.headroom = options.headroom;
  auto memory = ParseByteSize(options.node_memory);
  if (!memory.ok()) {
    err << "inferd plan: --node-memory: " << memory.status().message() << "\n";
    return 2;
  }
  shape.memory_bytes = *memory;
  auto plan = MakeFleetPlan(std::move(models), shape, source);
  if (!plan.ok()) {
    err << "inferd plan: " << plan.status().message() << "\n";
    return plan.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (!options.emit_k8s_dir.empty()) {
    Status s = EmitKubernetes(*plan, options.k8s, options.emit_k8s_dir);
    if (!s.ok()) {
      err << "inferd plan: --emit-k8s: " << s.message() << "\n";
      return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
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
