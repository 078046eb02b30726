// StabilityRule: when a load step has measured long enough.
//
// A step is measured in fixed windows. It is stable when the last `windows`
// windows agree: their throughputs are within `tolerance` of each other, and so
// are their median latencies, where "within" means (max - min) <= tolerance *
// max. This is the rule common load tools use (three windows, 10%). A step that
// never settles stops after a cap of windows and is reported as unstable.
//
// Thread-safety: pure.
#pragma once

#include <span>

namespace inferd::bench {

struct WindowStats {
  double requests_per_s = 0;  // successful responses per second in the window
  double p50_ms = 0;          // median latency of those responses; 0 if none
};

struct StabilityRule {
  int windows = 3;          // how many trailing windows must agree (>= 1)
  double tolerance = 0.10;  // relative spread allowed, of the largest value

  // True when `history` (oldest first) has at least `windows` windows and the
  // last `windows` of them agree on throughput and on p50 latency.
  bool IsStable(std::span<const WindowStats> history) const;
};

// (max - min) <= tolerance * max over `values`; true for an empty span.
bool WithinTolerance(std::span<const double> values, double tolerance);

}  // namespace inferd::bench
