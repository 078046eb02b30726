// `inferd topology [--model-store DIR] [--json] [--cpus LIST]`: detects the
// CPU budget, reads the model store's configs, plans the executors and prints
// both. main.cc parses the flags (CLI11) and calls RunTopologyCommand.
//
// It only reads files: no model is loaded unless an annotator is given
// (`--calibrate`: main.cc passes profile::BatchCalibrationAnnotator, which
// loads each model and calibrates its batch sizes on its planned executor).
//
// Thread-compatible: run from one thread (it reads files and hwloc once).
#pragma once

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/model_config.h"
#include "topology/core_plan.h"
#include "topology/cpu_budget.h"
#include "topology/topology_report.h"

namespace inferd::topology {

struct TopologyCommandOptions {
  std::string model_store;  // "" = plan without models
  bool json = false;
  std::string cpus;      // --cpus LIST; overrides detect.cpus when set
  DetectOptions detect;  // default: the live machine (tests inject fakes)
  PlanOptions plan;
};

// Configs of DIR/<model>/config.yaml, by model name (sorted). A folder without
// config.yaml is not a model; a config that fails to parse is left out, and
// `problems` (when given) gets the parser's message for it. kNotFound when DIR
// is not a directory.
StatusOr<std::vector<config::ModelConfig>> LoadStoreConfigs(const std::string& dir,
                                                            std::vector<std::string>* problems);

// Measures what the report adds for one planned model (its config, its place
// in the plan). Called once per model, in plan order, from the calling thread.
using ModelAnnotator = std::function<ModelAnnotation(
    const config::ModelConfig& config, const PlannedModel& model, const CorePlan& plan)>;

// Prints the report on `out` (text, or JSON with --json); errors and config
// problems go to `err`. With `annotate`, each planned model is annotated
// before anything is printed, and every failure (a model's error, a config
// left out) is named in the report and on `err`. Returns the process exit
// code: 0; 1 on error (no budget, no store, no plan); 2 when, with
// `annotate`, a model failed (as `inferd plan --profile-store` does for a
// broken model): the report is still printed, with the other models' results.
int RunTopologyCommand(const TopologyCommandOptions& options, std::ostream& out,
                       std::ostream& err = std::cerr, const ModelAnnotator& annotate = {});

}  // namespace inferd::topology
