#include "config/mirror_config.h"

#include <yaml-cpp/yaml.h>

namespace inferd::config {
namespace {

std::string Quoted(const YAML::Node& v) {
  if (v.IsScalar()) return "'" + v.Scalar() + "'";
  if (v.IsSequence()) return "a list";
  if (v.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace

bool IsRemoteCandidate(const std::string& to) { return to.rfind("http://", 0) == 0; }

Status ValidateMirrorConfig(const MirrorConfig& c) {
  if (c.to.empty()) {
    return InvalidArgument(
        "mirror.to: expected a model of the store (name or name:version) or "
        "http://host:port/v2/models/NAME, got nothing");
  }
  if (!(c.fraction >= 0 && c.fraction <= 1)) {
    return InvalidArgument("mirror.fraction: expected a number from 0 to 1, got " +
                           std::to_string(c.fraction));
  }
  if (c.max_in_flight < 1 || c.max_in_flight > 4096) {
    return InvalidArgument("mirror.max_in_flight: expected an integer from 1 to 4096, got " +
                           std::to_string(c.max_in_flight));
  }
  if (c.timeout_ms < 1 || c.timeout_ms > 3'600'000) {
    return InvalidArgument("mirror.timeout_ms: expected an integer from 1 to 3600000, got " +
                           std::to_string(c.timeout_ms));
  }
  return Status::Ok();
}

StatusOr<MirrorConfig> ParseMirrorConfig(const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) {
    return InvalidArgument(file + ": mirror: expected a mapping {to, fraction, max_in_flight, "
                                  "timeout_ms}, got " + Quoted(node));
  }
  MirrorConfig c;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    try {
      if (key == "to") {
        c.to = v.as<std::string>();
      } else if (key == "fraction") {
        c.fraction = v.as<double>();
      } else if (key == "max_in_flight") {
        c.max_in_flight = v.as<int>();
      } else if (key == "timeout_ms") {
        c.timeout_ms = v.as<int64_t>();
      } else {
        return InvalidArgument(file + ": mirror." + key +
                               ": unknown key (known: to, fraction, max_in_flight, timeout_ms)");
      }
    } catch (const YAML::Exception&) {
      return InvalidArgument(file + ": mirror." + key + ": expected " +
                             (key == "to" ? "a string" : "a number") + ", got " + Quoted(v));
    }
  }
  Status st = ValidateMirrorConfig(c);
  if (!st.ok()) return InvalidArgument(file + ": " + st.message());
  return c;
}

}  // namespace inferd::config
