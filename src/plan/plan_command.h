// `inferd plan --models FILE.yaml (--node-cores N --node-memory SIZE |
//  --node-type NAME:CORES:MEMORY:PRICE ...) [--headroom 0.2] [--json]
//  [--emit-k8s DIR] [--current PLAN.json] [--from-metrics URL,... [--metrics-window S]
//  [--save-models OUT]]`: packs the models of FILE onto the fewest nodes (one
// shape) or the cheapest mix of node types, prints the plan, and optionally
// writes the Kubernetes and KServe objects that run it. With --current it
// rebalances a running plan (rebalance.h); with --from-metrics the models'
// rps and core_ms come from running servers (traffic_metrics.h), FILE giving
// memory. main.cc parses the flags (CLI11) and calls RunPlanCommand.
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
#include "plan/traffic_metrics.h"

namespace inferd::plan {

struct PlanCommandOptions {
  std::string models_file;              // --models
  double node_cores = 0;                // --node-cores
  std::string node_memory;              // --node-memory, e.g. 64Gi
  std::vector<std::string> node_types;  // --node-type NAME:CORES:MEMORY:PRICE, repeatable
  double node_price = 0;  // --node-price: the --node-cores/--node-memory shape beside --node-type
  double headroom = 0.2;  // --headroom: share of each node left free
  bool json = false;      // --json
  std::string emit_k8s_dir;  // --emit-k8s: "" = write nothing
  std::string current_plan;  // --current: the --json of the running plan; "" = from scratch
  double rebalance_target =
      1.05;  // --rebalance-target: eliminate nodes while over this x the bound
  std::vector<std::string> from_metrics;  // --from-metrics: /metrics URLs of running servers
  double metrics_window_s = 30;           // --metrics-window
  std::string save_models;                // --save-models: the measured models file
  MetricsFetcher fetch_metrics;           // an HTTP GET (main.cc passes bench's)
  K8sOptions k8s;                         // the objects' image, ports, drain timeout, ...
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
