// RenderCurveSvg: the throughput-latency curve of a sweep as a standalone SVG.
//
// x: successful requests/s; y: latency in ms, from 0. Two series, p50 and p99,
// one point per step joined in sweep order, each point labelled with its load
// (c=4, r=100); axes with ticks at 1-2-5 steps and units; a legend; an
// optional dashed line at the latency budget. Hand-written SVG 1.1: no
// scripts, no external fonts, so any viewer or converter renders it.
//
// Thread-safety: pure.
#pragma once

#include <string>
#include <vector>

#include "bench/step_result.h"

namespace inferd::bench {

struct PlotOptions {
  std::string title = "inferd bench: throughput vs latency";
  double budget_ms = 0;        // > 0 draws the budget line
  int budget_percentile = 99;  // for its label
};

std::string RenderCurveSvg(const std::vector<StepResult>& steps, const PlotOptions& options);

// Tick values 0, s, 2s, ... covering [0, max] with a 1-2-5 step s chosen for
// about `target` ticks; the last tick is >= max. `max` <= 0 is treated as 1.
std::vector<double> NiceTicks(double max, int target = 6);

}  // namespace inferd::bench
