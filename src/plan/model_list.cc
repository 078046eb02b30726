#include "plan/model_list.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace inferd::plan {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

// Longest first, so "Mi" is tried before "M".
constexpr Suffix kSuffixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
};

// 1-based line of a node, for messages.
int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

std::string At(const std::string& file, int line) {
  return file + ":" + std::to_string(line) + ": ";
}

// A finite, non-negative number; `what` names the field in messages.
Status ReadFigure(const YAML::Node& node, const std::string& file, const std::string& model,
                  const char* what, double* out) {
  const int line = LineOf(node);
  if (!node.IsScalar()) {
    return InvalidArgument(At(file, line) + "model '" + model + "': " + what +
                           ": expected a number, got " + (node.IsMap() ? "a mapping" : "a list"));
  }
  const std::string& s = node.Scalar();
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
    return InvalidArgument(At(file, line) + "model '" + model + "': " + what +
                           ": expected a number, got '" + s + "'");
  }
  if (v < 0) {
    return InvalidArgument(At(file, line) + "model '" + model + "': " + what +
                           ": must not be negative, got " + s);
  }
  *out = v;
  return Status::Ok();
}

}  // namespace

StatusOr<int64_t> ParseByteSize(std::string_view text) {
  const std::string shown(text);
  std::string_view number = text;
  double factor = 1;
  for (const Suffix& s : kSuffixes) {
    if (text.size() > s.text.size() && text.ends_with(s.text)) {
      number = text.substr(0, text.size() - s.text.size());
      factor = s.factor;
      break;
    }
  }
  double v = 0;
  auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (number.empty() || ec != std::errc() || p != number.data() + number.size() ||
      !std::isfinite(v)) {
    return InvalidArgument(
        "expected a byte count such as 180M, 512Mi or 2Gi (suffixes k M G T P, "
        "Ki Mi Gi Ti Pi), got '" +
        shown + "'");
  }
  if (v < 0) return InvalidArgument("must not be negative, got " + shown);
  const double bytes = std::round(v * factor);
  if (bytes > 9.2e18) return InvalidArgument("too large: " + shown);
  return static_cast<int64_t>(bytes);
}

std::string FormatByteQuantity(int64_t bytes) {
  static constexpr std::pair<const char*, int64_t> kBinary[] = {{"Ti", int64_t{1} << 40},
                                                                {"Gi", int64_t{1} << 30},
                                                                {"Mi", int64_t{1} << 20},
                                                                {"Ki", int64_t{1} << 10}};
  if (bytes > 0) {
    for (const auto& [suffix, unit] : kBinary) {
      if (bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
    }
  }
  return std::to_string(bytes);
}

std::string FormatBytesShort(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "Ki", "Mi", "Gi", "Ti", "Pi"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.1f%s", v, kUnits[u]);
  return buf;
}

StatusOr<std::vector<ModelDemand>> ParseModelList(const std::string& text,
                                                  const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(At(file, e.mark.line + 1) + "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    return InvalidArgument(At(file, root.IsDefined() && !root.IsNull() ? LineOf(root) : 1) +
                           "expected a mapping with the key `models`");
  }
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key != "models") {
      return InvalidArgument(At(file, LineOf(kv.first)) + "unknown key '" + key +
                             "' (the file holds `models:`, a list)");
    }
  }
  const YAML::Node list = root["models"];
  if (!list.IsSequence()) {
    return InvalidArgument(At(file, LineOf(list.IsDefined() ? list : root)) +
                           "models: expected a list of {name, rps, core_ms, memory}");
  }
  std::vector<ModelDemand> models;
  models.reserve(list.size());
  std::set<std::string> names;
  for (const YAML::Node& entry : list) {
    const int line = LineOf(entry);
    if (!entry.IsMap()) {
      return InvalidArgument(At(file, line) + "expected a mapping {name, rps, core_ms, memory}");
    }
    ModelDemand m;
    m.line = line;
    const YAML::Node name = entry["name"];
    if (!name.IsDefined() || !name.IsScalar() || name.Scalar().empty()) {
      return InvalidArgument(At(file, line) + "model without a `name`");
    }
    m.name = name.Scalar();
    if (!names.insert(m.name).second) {
      return InvalidArgument(At(file, line) + "model '" + m.name + "' is listed twice");
    }
    for (const auto& kv : entry) {
      const std::string key = kv.first.Scalar();
      if (key != "name" && key != "rps" && key != "core_ms" && key != "memory") {
        return InvalidArgument(At(file, LineOf(kv.first)) + "model '" + m.name +
                               "': unknown key '" + key + "' (known: name, rps, core_ms, memory)");
      }
    }
    for (const char* key : {"rps", "core_ms", "memory"}) {
      if (!entry[key].IsDefined() || entry[key].IsNull()) {
        return InvalidArgument(At(file, line) + "model '" + m.name + "': missing `" + key + "`");
      }
    }
    RETURN_IF_ERROR(ReadFigure(entry["rps"], file, m.name, "rps", &m.rps));
    RETURN_IF_ERROR(ReadFigure(entry["core_ms"], file, m.name, "core_ms", &m.core_ms));
    const YAML::Node memory = entry["memory"];
    if (!memory.IsScalar()) {
      return InvalidArgument(At(file, LineOf(memory)) + "model '" + m.name +
                             "': memory: expected a byte count such as 180M");
    }
    auto bytes = ParseByteSize(memory.Scalar());
    if (!bytes.ok()) {
      return InvalidArgument(At(file, LineOf(memory)) + "model '" + m.name +
                             "': memory: " + bytes.status().message());
    }
    m.memory_bytes = *bytes;
    models.push_back(std::move(m));
  }
  if (models.empty()) return InvalidArgument(At(file, LineOf(list)) + "models: the list is empty");
  return models;
}

StatusOr<std::vector<ModelDemand>> LoadModelList(const std::string& file) {
  std::ifstream in(file);
  if (!in) return NotFound(file + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return ParseModelList(text.str(), file);
}

}  // namespace inferd::plan
