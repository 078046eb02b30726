#include "optimize/optimize_report.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>

#include "common/json_writer.h"

namespace inferd::optimize {
namespace {

std::string Figure(double v) {
  char buf[32];
  if (v == 0) return "0";
  std::snprintf(buf, sizeof(buf), "%.2e", v);
  return buf;
}

std::string Ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

// A message on one line of the table: a multi-line one (a TorchScript
// traceback) as its first line and its last, which says what was raised.
std::string OneLine(const std::string& message) {
  const size_t first_end = message.find('\n');
  if (first_end == std::string::npos) return message;
  const std::string first = message.substr(0, first_end);
  const size_t end = message.find_last_not_of(" \n");
  if (end == std::string::npos || end < first_end) return first;
  const size_t start = message.rfind('\n', end) + 1;  // found: end is past first_end
  const size_t text = message.find_first_not_of(' ', start);
  return first + " ... " + message.substr(text, end + 1 - text);
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

}  // namespace

std::string WriteReportJson(const OptimizeReport& r) {
  JsonWriter w;
  w.BeginObject();
  w.Key("format").Int(r.format);
  w.Key("stamp").String(r.stamp);
  w.Key("model").String(r.model);
  w.Key("version").Int(r.version);
  w.Key("samples").Int(r.samples);
  w.Key("sample_source").String(r.sample_source);
  w.Key("candidates").BeginArray();
  for (const auto& c : r.rows) {
    w.BeginObject();
    w.Key("candidate").String(c.candidate);
    w.Key("file").String(c.file);
    w.Key("present").Bool(c.present);
    w.Key("result").String(c.result);
    w.Key("compared").Bool(c.compared);
    w.Key("error").String(c.error);
    w.Key("max_abs_error").Double(c.max_abs_error);
    w.Key("max_rel_error").Double(c.max_rel_error);
    w.Key("top1_agreed").Int(c.top1_agreed);
    w.Key("top1_checked").Int(c.top1_checked);
    w.Key("ms_per_item").Double(c.ms_per_item);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

StatusOr<OptimizeReport> ParseReportJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  simdjson::dom::element root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS) {
    return InvalidArgument("not JSON");
  }
  OptimizeReport r;
  int64_t format = 0, version = 0, samples = 0;
  std::string_view stamp, model, source;
  if (root["format"].get(format) || format != kReportFormat) {
    return InvalidArgument("format: expected " + std::to_string(kReportFormat));
  }
  if (root["stamp"].get(stamp) || root["model"].get(model) || root["version"].get(version) ||
      root["samples"].get(samples) || root["sample_source"].get(source)) {
    return InvalidArgument("expected stamp, model, version, samples and sample_source");
  }
  r.stamp = stamp;
  r.model = model;
  r.version = version;
  r.samples = static_cast<int>(samples);
  r.sample_source = source;
  simdjson::dom::array rows;
  if (root["candidates"].get(rows)) return InvalidArgument("candidates: expected a list");
  for (simdjson::dom::element e : rows) {
    CandidateRow c;
    std::string_view candidate, file, result, error;
    int64_t agreed = 0, checked = 0;
    if (e["candidate"].get(candidate) || e["file"].get(file) || e["present"].get(c.present) ||
        e["result"].get(result) || e["compared"].get(c.compared) || e["error"].get(error) ||
        e["max_abs_error"].get(c.max_abs_error) || e["max_rel_error"].get(c.max_rel_error) ||
        e["top1_agreed"].get(agreed) || e["top1_checked"].get(checked) ||
        e["ms_per_item"].get(c.ms_per_item)) {
      return InvalidArgument("candidates[" + std::to_string(r.rows.size()) +
                             "]: a field is missing or of another type");
    }
    c.candidate = candidate;
    c.file = file;
    c.result = result;
    c.error = error;
    c.top1_agreed = static_cast<int>(agreed);
    c.top1_checked = static_cast<int>(checked);
    r.rows.push_back(std::move(c));
  }
  return r;
}

void PrintReport(const OptimizeReport& r, std::string_view note, std::ostream& out) {
  out << "model " << r.model << " version " << r.version << ": " << r.samples << " sample"
      << (r.samples == 1 ? "" : "s") << " (" << r.sample_source << ")";
  if (!note.empty()) out << ", " << note;
  out << "\n";
  // The column fits the measured rows; the others' reasons run to the end of the line.
  size_t result_width = 6;
  for (const auto& c : r.rows) {
    if (c.compared) result_width = std::max(result_width, c.result.size());
  }
  out << "  " << Pad("candidate", 16) << Pad("file", 17) << Pad("result", result_width + 2)
      << Pad("max abs", 10) << Pad("max rel", 10) << Pad("top-1", 8) << "ms/item\n";
  for (const auto& c : r.rows) {
    out << "  " << Pad(c.candidate, 16) << Pad(c.present ? c.file : "-", 17);
    if (!c.compared) {
      // Long reasons (why an export failed) run to the end of the line.
      out << OneLine(c.result);
      if (!c.error.empty()) out << "; failed on the samples: " << OneLine(c.error);
      out << "\n";
      continue;
    }
    out << Pad(c.result, result_width + 2) << Pad(Figure(c.max_abs_error), 10)
        << Pad(Figure(c.max_rel_error), 10)
        << Pad(c.top1_checked ? std::to_string(c.top1_agreed) + "/" + std::to_string(c.top1_checked)
                              : "-",
               8)
        << Ms(c.ms_per_item) << "\n";
  }
}

}  // namespace inferd::optimize
