#include "topology/topology_command.h"

#include <algorithm>
#include <filesystem>

#include "topology/topology_report.h"

namespace inferd::topology {
namespace fs = std::filesystem;

StatusOr<std::vector<config::ModelConfig>> LoadStoreConfigs(const std::string& dir,
                                                            std::vector<std::string>* problems) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("model store '" + dir + "' is not a directory");
  std::vector<fs::path> model_dirs;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && fs::exists(it->path() / "config.yaml", ec)) {
      model_dirs.push_back(it->path());
    }
  }
  if (ec) return Internal("model store '" + dir + "': " + ec.message());
  std::sort(model_dirs.begin(), model_dirs.end());
  std::vector<config::ModelConfig> configs;
  for (const fs::path& d : model_dirs) {
    auto c = config::LoadModelConfig((d / "config.yaml").string(), d.filename().string());
    if (!c.ok()) {
      if (problems) problems->push_back(c.status().message());
      continue;
    }
    configs.push_back(std::move(c).value());
  }
  return configs;
}

int RunTopologyCommand(const TopologyCommandOptions& options, std::ostream& out, std::ostream& err,
                       const ModelAnnotator& annotate) {
  DetectOptions detect = options.detect;
  if (!options.cpus.empty()) detect.cpus = options.cpus;
  auto budget = DetectCpuBudget(detect);
  if (!budget.ok()) {
    err << "inferd topology: " << budget.status().message() << "\n";
    return 1;
  }
  std::vector<config::ModelConfig> models;
  std::vector<std::string> problems;
  if (!options.model_store.empty()) {
    auto loaded = LoadStoreConfigs(options.model_store, &problems);
    if (!loaded.ok()) {
      err << "inferd topology: " << loaded.status().message() << "\n";
      return 1;
    }
    for (const auto& p : problems) err << "inferd topology: skipped: " << p << "\n";
    models = std::move(loaded).value();
  }
  auto plan = MakeCorePlan(budget->usable, models, options.plan);
  if (!plan.ok()) {
    err << "inferd topology: " << plan.status().message() << "\n";
    return 1;
  }
  if (!annotate) {
    if (options.json) {
      WriteTopologyJson(*budget, *plan, out);
    } else {
      WriteTopologyText(*budget, *plan, out);
    }
    return 0;
  }
  PlanAnnotations annotations;
  annotations.errors = problems;
  for (const PlannedModel& planned : plan->models) {
    auto config = std::find_if(models.begin(), models.end(), [&](const config::ModelConfig& c) {
      return c.name == planned.name;
    });
    if (config == models.end()) {  // MakeCorePlan plans the configs it is given, no other
      annotations.models.push_back({});
      continue;
    }
    annotations.models.push_back(annotate(*config, planned, *plan));
    const std::string& error = annotations.models.back().error;
    if (!error.empty()) {
      err << "inferd topology: " << error << "\n";
      annotations.errors.push_back(error);
    }
  }
  if (options.json) {
    WriteTopologyJson(*budget, *plan, out, &annotations);
  } else {
    WriteTopologyText(*budget, *plan, out, &annotations);
  }
  return annotations.errors.empty() ? 0 : 2;
}

}  // namespace inferd::topology
