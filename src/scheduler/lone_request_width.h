// LoneRequestWidth: the width decision at dispatch (issue 37, part 3). A
// batch that is one lone request (nothing else queued for any model, and the
// model's batch before it was lone too) of a model that can run wide takes
// the cores of the executors that are idle now: they are parked (run
// nothing) while it runs, so the threads computing never exceed the usable
// cores. Under load the queue is not empty, nothing is lent, and the plan's
// shape (instances x threads) stands. The batch before counts because
// closed-loop clients answered together come back together: the first of 8
// finds the queue empty for a moment, and run wide it would hold the 7
// behind it for a whole forward (measured: c=8 0.85x the req/s without).
// OpenVINO's LATENCY / THROUGHPUT hints make this choice once, by hand; here
// it is made per batch, from the queue.
//
// Pure policy: no locks, no threads; the scheduler passes what it knows
// under its mutex. Thread-safety: none needed.
#pragma once

#include <cstddef>
#include <vector>

#include "scheduler/model_spec.h"

namespace inferd::scheduler {

enum class ExecutorState {
  kBusy,  // running a batch or a task, or between them
  kIdle,  // waiting for work
  kLent,  // parked: its cores run another executor's lone request
};

struct LoneRequestInput {
  bool enabled = true;            // Scheduler::Options::widen_lone_requests
  bool model_runs_wide = false;   // backend::Model::RunsWide()
  size_t batch_requests = 0;      // requests in the batch about to run
  size_t previous_batch_requests = 1;  // in the model's batch before it
  bool anything_queued = false;   // any model's queue holds a request (after the batch was taken)
  int self = 0;                   // the executor about to run it
  std::vector<ExecutorState> executors;  // by id
};

// The ids of the executors to park for this batch (idle ones, never `self`);
// empty when it runs on its own executor's cores.
std::vector<int> ExecutorsToLend(const LoneRequestInput& in);

// The width of executor `self` with the cores of `lent` added after its own
// (its own first: the calling thread stays on its core).
ExecutorSpec WidenedExecutor(const std::vector<ExecutorSpec>& executors, int self,
                             const std::vector<int>& lent);

}  // namespace inferd::scheduler
