// The peak traffic of each model, which `inferd plan --profile-store` cannot
// measure (it is the fleet's load, not a property of the model): a YAML file
// mapping model names to peak requests per second,
//
//   resnet18: 40
//   mobilenet_v3_small: 120
//
// Values must be finite non-negative numbers; errors name the file, the line
// and the reason. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace inferd::profile {

struct RpsEntry {
  double rps = 0;
  int line = 0;  // 1-based line in the file
};

// Parses `text`; `file` names it in messages.
StatusOr<std::map<std::string, RpsEntry>> ParseRpsTable(const std::string& text,
                                                        const std::string& file);
// Reads and parses FILE.
StatusOr<std::map<std::string, RpsEntry>> LoadRpsTable(const std::string& file);

}  // namespace inferd::profile
