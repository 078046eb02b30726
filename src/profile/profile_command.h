// `inferd plan --profile-store DIR --rps FILE [--default-rps N]
//  [--save-models OUT] --node-cores N --node-memory SIZE ...`: measures
// core_ms and memory of every model of a model store (store_profiler.h),
// takes each model's peak req/s from FILE (rps_table.h; traffic is not a
// property of the store), writes the models file `inferd plan --models` reads
// (to OUT when given, so the fleet can be planned again without profiling),
// then plans it exactly as `--models` would.
//
// The models file is parsed back with plan::ParseModelList before planning:
// what is saved is exactly what was planned. One line per model goes to `err`
// as it is measured (a store of large models takes a while).
//
// Exit codes: 0 done; 2 a bad store, model, rps file or flag (every failing
// model is named); 1 anything else. Thread-compatible: run from one thread.
#pragma once

#include <iostream>
#include <string>

#include "backend/backend.h"
#include "plan/plan_command.h"
#include "profile/store_profiler.h"

namespace inferd::profile {

struct ProfileCommandOptions {
  std::string store_dir;    // --profile-store
  std::string rps_file;     // --rps: YAML `model: req/s`
  double default_rps = -1;  // --default-rps: for models the rps file leaves out; <0: an error
  std::string save_models;  // --save-models: "" = do not write the models file
  ProfileOptions profile;   // --profile-runs, --profile-warmup, --variable-dim
};

// Writes the models file for `profiles` (rps from `rps`, same order): a
// header saying how the figures were measured, then one line per model with
// its measurements in a trailing comment.
std::string FormatModelsFile(const std::vector<ModelProfile>& profiles,
                             const std::vector<double>& rps, const ProfileCommandOptions& options);

int RunProfiledPlan(const ProfileCommandOptions& options, const plan::PlanCommandOptions& plan,
                    backend::Backend& backend, std::ostream& out, std::ostream& err = std::cerr);

}  // namespace inferd::profile
