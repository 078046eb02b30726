// FairShare: which model an executor serves next when several are ready.
//
// Executors are shared by every model of a node, so the policy that picks
// among ready queues decides whether one model's backlog can make another
// wait. The policy:
//   1. Priority levels first (KServe v2 `priority`: 1, then the default 0,
//      then 2, 3, ...), across models: a level is served only when no ready
//      queue has a more urgent head. Lowest-priority work (mirrored requests)
//      thus runs after all other work.
//   2. Within a level, start-time fair queuing by measured cost: each queue
//      carries a virtual start S, the compute time it has used divided by
//      its `weight:`. The next batch goes to the smallest virtual finish
//      F = S + (expected cost of its next batch) / weight. A queue that was
//      idle re-enters at the system's virtual time V (the smallest S of the
//      busy queues), so idleness earns no credit to spend in a burst.
//   3. Ties: the longest-waiting head.
// So a light model's request, ready while a heavy model has a backlog, is
// taken by the next executor that frees (its F is V plus a fraction of a
// millisecond, the heavy model's is V plus a whole batch): it waits at most
// for a batch already running. Two backlogged models get compute time in
// proportion to their weights, whatever their batch costs. This is the
// policy of TF Serving's shared batch scheduler (round robin between queues)
// made cost-aware, as Triton's rate limiter weighs instances by resources.
//
// Pure functions of their arguments (no clock, no locks): tested alone.
#pragma once

#include <vector>

#include "common/clock.h"

namespace inferd::scheduler {

struct Contender {
  int level = 0;             // priority level of the head (smaller: first)
  double start = 0;          // virtual start S, seconds of weighted compute
  double cost_s = 0;         // expected seconds of the next batch
  int weight = 1;            // >= 1
  TimePoint head_arrival{};  // when the head request was queued
};

class FairShare {
 public:
  // The index of the contender to serve next; -1 when there is none.
  static int Pick(const std::vector<Contender>& contenders);
  // Its virtual finish F.
  static double Finish(const Contender& c);
  // S for a queue that becomes busy again at system virtual time `v`.
  static double Reenter(double start, double v) { return start > v ? start : v; }
  // S after a batch that took `seconds` of an executor.
  static double Charge(double start, double seconds, int weight);
  // The next expected cost from the last one and a new measurement: a
  // moving average that follows a change of batch size within a few batches.
  static double UpdateCost(double expected, double measured);
};

}  // namespace inferd::scheduler
