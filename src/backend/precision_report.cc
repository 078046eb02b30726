#include "backend/precision_report.h"

#include <cstdio>

namespace inferd::backend {

bool IsChosen(const PrecisionTrial& trial, const PrecisionReport& report) {
  return trial.precision == report.chosen && trial.runtime == report.runtime;
}

std::string VerdictClass(const PrecisionTrial& trial, const PrecisionReport& report) {
  if (IsChosen(trial, report)) return "chosen";
  if (!trial.built) return "not_built";
  if (trial.verdict.rfind("refused", 0) == 0) return "refused";
  return trial.precision == "fp32" && trial.runtime == "torchscript" ? "reference" : "accepted";
}

void WritePrecisionJson(JsonWriter& w, const PrecisionReport& report) {
  w.BeginObject();
  w.Key("requested").String(report.requested);
  w.Key("chosen").String(report.chosen);
  w.Key("runtime").String(report.runtime);
  w.Key("file").String(report.file);
  w.Key("samples").Int(report.samples);
  w.Key("sample_source").String(report.sample_source);
  w.Key("served_batch").Int(report.served_batch);
  w.Key("timed_batch").Int(report.timed_batch);
  w.Key("candidates").BeginArray();
  for (const PrecisionTrial& t : report.candidates) {
    w.BeginObject();
    w.Key("runtime").String(t.runtime);
    w.Key("precision").String(t.precision);
    w.Key("file").String(t.file);
    w.Key("built").Bool(t.built);
    w.Key("ms_per_item").Double(t.ms_per_item);
    w.Key("ms_alone").Double(t.ms_alone);
    w.Key("ms_served").Double(t.ms_served);
    w.Key("max_rel_error").Double(t.max_relative_error);
    w.Key("top1_agreement");
    if (t.top1_checked > 0) {
      w.Double(static_cast<double>(t.top1_agreed) / t.top1_checked);
    } else {
      w.Null();
    }
    w.Key("top1_agreed").Int(t.top1_agreed);
    w.Key("top1_checked").Int(t.top1_checked);
    w.Key("tolerance").Double(t.tolerance);
    w.Key("verdict").String(t.verdict);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::vector<std::string> FormatPrecision(const PrecisionReport& report) {
  std::vector<std::string> lines;
  lines.push_back("precision " + report.requested + ": " + report.runtime + " " + report.chosen +
                  " (" + std::to_string(report.samples) + " samples, " + report.sample_source +
                  "; served batch " + std::to_string(report.served_batch) + ", timed at " +
                  std::to_string(report.timed_batch) + ")");
  for (const PrecisionTrial& t : report.candidates) {
    char ms[64], tolerance[32], line[256];
    if (t.ms_per_item > 0) {
      std::snprintf(ms, sizeof ms, "%10.3f ms/item, %.3f alone", t.ms_per_item, t.ms_alone);
    } else {
      std::snprintf(ms, sizeof ms, "%10s ms/item", "-");  // not timed: refused or not built
    }
    if (t.tolerance > 0) {
      std::snprintf(tolerance, sizeof tolerance, "tolerance %.1e", t.tolerance);
    } else {
      std::snprintf(tolerance, sizeof tolerance, "the reference");  // fp32
    }
    std::snprintf(line, sizeof line, "  %-11s  %-5s %s  max error %.2e (%s)  top-1 %d/%d  ",
                  t.runtime.c_str(), t.precision.c_str(), ms, t.max_relative_error, tolerance,
                  t.top1_agreed, t.top1_checked);
    lines.push_back(line + t.verdict);
  }
  return lines;
}

}  // namespace inferd::backend
