// Writing strings with yaml-cpp's emitter so that every reader takes them as
// strings: yaml-cpp writes "8080" or "true" plain, which Kubernetes would read
// as a number or a boolean. Pure functions; thread-safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace inferd::plan::internal {

// True when a plain scalar `s` would not read back as the string `s` under
// YAML 1.1 or 1.2 core rules (numbers, booleans, null, empty).
bool NeedsQuotes(const std::string& s);

struct Text {
  std::string value;
};

inline YAML::Emitter& operator<<(YAML::Emitter& out, const Text& t) {
  if (NeedsQuotes(t.value)) out << YAML::DoubleQuoted;
  return out << t.value;
}

}  // namespace inferd::plan::internal
