#include "profile/calibration_annotation.h"

#include <cstdio>

#include "backend/precision_report.h"
#include "common/json_writer.h"
#include "topology/cpu_list.h"

namespace inferd::profile {
namespace {

std::string Where(const StoreCalibration& r) {
  const CalibrationExecutor& e = r.executor;
  return "version " + std::to_string(r.version) + ", executor " + std::to_string(e.id) + ", " +
         std::to_string(e.threads) + (e.threads == 1 ? " thread" : " threads") +
         (e.cores.empty() ? std::string() : " on cpus " + topology::FormatCpuList(e.cores));
}

}  // namespace

topology::ModelAnnotation CalibrationAnnotation(const config::ModelConfig& config,
                                                const StatusOr<StoreCalibration>& result) {
  topology::ModelAnnotation a;
  a.json_key = "batch_calibration";
  JsonWriter w;
  w.BeginObject();
  if (!result.ok()) {
    a.error = result.status().message();
    w.Key("calibrated").Bool(false).Key("error").String(a.error).EndObject();
    a.json_value = w.Take();
    a.text.push_back("batch calibration: error: " + a.error);
    return a;
  }
  const StoreCalibration& r = *result;
  const scheduler::BatchCalibration& c = r.calibration;
  const int limit = c.calibrated ? c.max_batch : config.max_batch_size;
  w.Key("version").Int(r.version);
  w.Key("executor").Int(r.executor.id);
  w.Key("threads").Int(r.executor.threads);
  w.Key("cores").IntArray(r.executor.cores);
  w.Key("load_seconds").Double(r.load_seconds);
  w.Key("calibrated").Bool(c.calibrated);
  w.Key("max_batch_size").Int(limit);
  w.Key("seconds").Double(c.seconds);
  w.Key(c.calibrated ? "note" : "reason").String(c.note);
  w.Key("sizes").BeginArray();
  for (const auto& s : c.sizes) {
    w.BeginObject().Key("batch_size").Int(s.batch).Key("latency_ms").Double(s.latency_ms);
    w.Key("ms_per_item").Double(s.ms_per_item).Key("chosen").Bool(s.chosen).EndObject();
  }
  w.EndArray();
  w.Key("precision");
  if (r.precision.requested.empty()) {
    w.Null();
  } else {
    backend::WritePrecisionJson(w, r.precision);
  }
  w.EndObject();
  a.json_value = w.Take();

  if (c.calibrated) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", c.seconds);
    a.text.push_back("batch calibration (" + Where(r) + "): up to " + std::to_string(limit) +
                     ", measured in " + seconds + " s (" + c.note + ")");
    for (const auto& line : scheduler::FormatCalibration(c)) a.text.push_back("  " + line);
  } else {
    a.text.push_back("batch calibration (" + Where(r) + "): not calibrated (" + c.note +
                     "): up to " + std::to_string(limit));
  }
  if (!r.precision.requested.empty()) {
    for (const auto& line : backend::FormatPrecision(r.precision)) a.text.push_back(line);
  }
  return a;
}

topology::ModelAnnotator BatchCalibrationAnnotator(backend::Backend& backend, std::string store_dir,
                                                   scheduler::CalibrationOptions options) {
  return [&backend, store_dir = std::move(store_dir), options](const config::ModelConfig& config,
                                                               const topology::PlannedModel& model,
                                                               const topology::CorePlan& plan) {
    CalibrationExecutor executor;
    for (const auto& e : plan.executors) {
      if (!model.executor_ids.empty() && e.id == model.executor_ids.front()) {
        executor = {e.id, e.cores, e.num_threads};
      }
    }
    if (executor.id < 0) {
      return CalibrationAnnotation(
          config, InvalidArgument("model '" + config.name + "': the plan gives it no executor"));
    }
    return CalibrationAnnotation(
        config, CalibrateStoreModel(backend, store_dir, config, executor, options));
  };
}

}  // namespace inferd::profile
