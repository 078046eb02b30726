#include "profile/rps_table.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace inferd::profile {

StatusOr<std::map<std::string, RpsEntry>> ParseRpsTable(const std::string& text,
                                                        const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) +
                           ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    return InvalidArgument(file +
                           ":1: expected a mapping of model names to peak req/s, "
                           "e.g. `resnet18: 40`");
  }
  std::map<std::string, RpsEntry> table;
  for (const auto& kv : root) {
    const int line = kv.first.Mark().line + 1;
    const std::string at = file + ":" + std::to_string(line) + ": ";
    const std::string name = kv.first.Scalar();
    if (!kv.second.IsScalar()) {
      return InvalidArgument(at + "model '" + name + "': expected a number of req/s");
    }
    const std::string& s = kv.second.Scalar();
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
      return InvalidArgument(at + "model '" + name + "': expected a number of req/s, got '" + s +
                             "'");
    }
    if (v < 0) {
      return InvalidArgument(at + "model '" + name + "': req/s must not be negative, got " + s);
    }
    if (!table.emplace(name, RpsEntry{v, line}).second) {
      return InvalidArgument(at + "model '" + name + "' is named twice");
    }
  }
  return table;
}

StatusOr<std::map<std::string, RpsEntry>> LoadRpsTable(const std::string& file) {
  std::ifstream in(file);
  if (!in) return InvalidArgument("cannot read the rps file '" + file + "'");
  std::stringstream text;
  text << in.rdbuf();
  return ParseRpsTable(text.str(), file);
}

}  // namespace inferd::profile
