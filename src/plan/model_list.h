// The model list that `inferd plan` packs: one ModelDemand per model, read
// from a YAML file
//
//   models:
//     - {name: m0001, rps: 40, core_ms: 12.5, memory: 180M}
//
// `rps` is the model's peak requests per second, `core_ms` the CPU time of one
// request on one core in milliseconds, `memory` the bytes of one loaded copy
// (a plain integer or a Kubernetes quantity: 180M, 1.5Gi). Unknown keys,
// missing, negative or non-numeric figures and repeated names are refused with
// the file, the line and the reason, so a typo never turns into a wrong plan.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::plan {

struct ModelDemand {
  std::string name;
  double rps = 0;            // peak requests per second
  double core_ms = 0;        // CPU milliseconds per request on one core
  int64_t memory_bytes = 0;  // one loaded copy
  int line = 0;              // 1-based line in the file (0 when not read from a file)

  // Cores the model keeps busy at its peak: rps * core_ms / 1000.
  double cores() const { return rps * core_ms / 1000.0; }
};

// Parses a byte count: a plain non-negative integer, or a number with a
// Kubernetes suffix, decimal (k, K, M, G, T, P: powers of 1000) or binary
// (Ki, Mi, Gi, Ti, Pi: powers of 1024). "180M" = 180,000,000; "1.5Gi" =
// 1,610,612,736. Refuses negatives, other suffixes and values past int64.
StatusOr<int64_t> ParseByteSize(std::string_view text);

// Writes a byte count the way Kubernetes quantities read best: the largest
// binary suffix that divides it exactly ("180Mi"), else plain bytes.
std::string FormatByteQuantity(int64_t bytes);

// Human-readable, rounded ("171.7Mi", "1.5Gi"); for reports, not for YAML.
std::string FormatBytesShort(int64_t bytes);

// Parses the model list held in `text`; `file` names it in messages.
StatusOr<std::vector<ModelDemand>> ParseModelList(const std::string& text, const std::string& file);

// Reads and parses FILE.
StatusOr<std::vector<ModelDemand>> LoadModelList(const std::string& file);

}  // namespace inferd::plan
