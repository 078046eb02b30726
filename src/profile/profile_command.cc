#include "profile/profile_command.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "plan/model_list.h"
#include "profile/rps_table.h"

namespace inferd::profile {

namespace {

std::string Fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Rounded up to whole KiB: a plan must not under-count a copy.
std::string KiB(int64_t bytes) { return plan::FormatByteQuantity((bytes + 1023) / 1024 * 1024); }

// The rps of each store model, in order; every model needs one (or the
// default), and every rps entry must name a store model (a typo would
// otherwise plan a model with no traffic).
StatusOr<std::vector<double>> RpsOfModels(const std::vector<std::string>& models,
                                          const ProfileCommandOptions& options) {
  std::map<std::string, RpsEntry> table;
  if (!options.rps_file.empty()) {
    ASSIGN_OR_RETURN(table, LoadRpsTable(options.rps_file));
  }
  const std::set<std::string> names(models.begin(), models.end());
  for (const auto& [name, entry] : table) {
    if (!names.count(name)) {
      return InvalidArgument(options.rps_file + ":" + std::to_string(entry.line) + ": model '" +
                             name + "' is not in the model store " + options.store_dir);
    }
  }
  std::vector<double> rps;
  std::string missing;
  for (const auto& name : models) {
    auto it = table.find(name);
    if (it != table.end()) {
      rps.push_back(it->second.rps);
    } else if (options.default_rps >= 0) {
      rps.push_back(options.default_rps);
    } else {
      missing += (missing.empty() ? "" : ", ") + name;
    }
  }
  if (!missing.empty()) {
    return InvalidArgument("no peak req/s for " + missing +
                           (options.rps_file.empty()
                                ? ": give --rps FILE or --default-rps N"
                                : " in " + options.rps_file + " (or give --default-rps N)"));
  }
  return rps;
}

}  // namespace

std::string FormatModelsFile(const std::vector<ModelProfile>& profiles,
                             const std::vector<double>& rps, const ProfileCommandOptions& options) {
  std::string text =
      "# Measured by `inferd plan --profile-store " + options.store_dir + "`; rps from " +
      (options.rps_file.empty() ? "--default-rps" : options.rps_file) + ".\n" +
      (options.profile.batched
           ? std::string("# core_ms: thread CPU time per item at the largest batch size that ") +
                 "calibration chose (one intra-op thread;\n# batch 1 for models without "
                 "batching), as the queue forms batches at peak.\n"
           : "# core_ms: median thread CPU time of " + std::to_string(options.profile.runs) +
                 " batch-1 forwards on one intra-op thread, after " +
                 std::to_string(options.profile.warmup_runs) + " warm-up forwards.\n") +
      "# memory: the larger of the model's stated weight bytes and the resident memory its load\n"
      "# and forwards added (rounded up to KiB).\n"
      "models:\n";
  for (size_t i = 0; i < profiles.size(); ++i) {
    const ModelProfile& p = profiles[i];
    const double core_ms = options.profile.batched ? p.core_ms_batched : p.core_ms;
    text += "  - {name: " + p.name + ", rps: " + Fixed("%.6g", rps[i]) +
            ", core_ms: " + Fixed("%.4f", core_ms) + ", memory: " + KiB(p.memory_bytes) +
            "}  # version " + std::to_string(p.version) + ", " + p.inputs + "; batch 1 " +
            Fixed("%.4f", p.core_ms) + " ms (" + Fixed("%.4f", p.core_ms_min) + ".." +
            Fixed("%.4f", p.core_ms_max) + ")" +
            (options.profile.batched ? ", batch " + std::to_string(p.batch) + " " +
                                           Fixed("%.4f", p.core_ms_batched) + " ms/item"
                                     : "") +
            ", process CPU " + Fixed("%.4f", p.process_cpu_ms) + " ms/forward; weights " +
            (p.weight_bytes > 0 ? plan::FormatBytesShort(p.weight_bytes) : "not stated") +
            ", resident +" + plan::FormatBytesShort(p.resident_bytes) + "\n";
  }
  return text;
}

int RunProfiledPlan(const ProfileCommandOptions& options, const plan::PlanCommandOptions& plan,
                    backend::Backend& backend, std::ostream& out, std::ostream& err) {
  auto models = ListStoreModels(options.store_dir);
  if (!models.ok()) {
    err << "inferd plan: --profile-store: " << models.status().message() << "\n";
    return 2;
  }
  auto rps = RpsOfModels(*models, options);
  if (!rps.ok()) {
    err << "inferd plan: --rps: " << rps.status().message() << "\n";
    return 2;
  }
  auto profiles = ProfileModels(
      backend, options.store_dir, *models, options.profile, [&](const ModelProfile& p) {
        const double core_ms = options.profile.batched ? p.core_ms_batched : p.core_ms;
        err << "profiled " << p.name << ": core_ms " << Fixed("%.4f", core_ms) << ", memory "
            << plan::FormatBytesShort(p.memory_bytes) << "\n";
      });
  if (!profiles.ok()) {
    err << "inferd plan: --profile-store: " << profiles.status().message() << "\n";
    return 2;
  }
  const std::string text = FormatModelsFile(*profiles, *rps, options);
  std::string source = "the profile of " + options.store_dir;
  if (!options.save_models.empty()) {
    std::ofstream file(options.save_models);
    file << text;
    file.close();
    if (!file) {
      err << "inferd plan: --save-models: cannot write '" << options.save_models << "'\n";
      return 1;
    }
    source = options.save_models;
  }
  auto demands = plan::ParseModelList(text, source);
  if (!demands.ok()) {
    err << "inferd plan: " << demands.status().message() << "\n";
    return 2;
  }
  return plan::RunPlanOnModels(std::move(demands).value(), source, plan, out, err);
}

}  // namespace inferd::profile
