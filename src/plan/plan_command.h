// `inferd plan --models FILE.yaml --node-cores N --node-memory SIZE
//  [--headroom 0.2] [--json] [--emit-k8s DIR]`: packs the models of FILE onto
// the fewest nodes, prints the plan, and optionally writes the Kubernetes and
// KServe objects that run it. main.cc parses the flags (CLI11) and calls
// RunPlanCommand.
//
// Exit codes: 0 done; 2 a bad model file or flag (the message names the line
// and the reason); 1 anything else (a directory that cannot be written).
// Thread-compatible: run from one thread.
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "plan/k8s_emitter.h"
#include "plan/model_list.h"

namespace inferd::plan {

struct PlanCommandOptions {
  std::string models_file;   // --models
  double node_cores = 0;     // --node-cores
  std::string node_memory;   // --node-memory, e.g. 64Gi
  double headroom = 0.2;     // --headroom: share of each node left free
  bool json = false;         // --json
  std::string emit_k8s_dir;  // --emit-k8s: "" = write nothing
  K8sOptions k8s;            // the objects' image, ports, drain timeout, ...
};

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out,
                   std::ostream& err = std::cerr);

// The same on models already read (options.models_file is ignored); `source`
// names where they came from in messages (profile/profile_command.h passes
// the measured models file it made).
int RunPlanOnModels(std::vector<ModelDemand> models, const std::string& source,
                    const PlanCommandOptions& options, std::ostream& out,
                    std::ostream& err = std::cerr);

}  // namespace inferd::plan
