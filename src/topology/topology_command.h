// `inferd topology [--model-store DIR] [--json] [--cpus LIST]`: detects the
// CPU budget, reads the model store's configs, plans the executors and prints
// both. main.cc parses the flags (CLI11) and calls RunTopologyCommand.
//
// Thread-compatible: run from one thread (it reads files and hwloc once).
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/model_config.h"
#include "topology/core_plan.h"
#include "topology/cpu_budget.h"

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

// Prints the report on `out` (text, or JSON with --json); errors and config
// problems go to `err`. Returns the process exit code: 0, or 1 on error.
int RunTopologyCommand(const TopologyCommandOptions& options, std::ostream& out,
                       std::ostream& err = std::cerr);

}  // namespace inferd::topology
