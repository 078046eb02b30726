// Memory admission: before a batch runs, the process's resident memory plus
// what the batch will need (its activation memory, activation_memory.h) is
// checked against a limit, so that a batch that does not fit is cut smaller,
// and a request that can never fit is refused, instead of the kernel's OOM
// killer taking the process.
//
// The limit is the smaller of `--memory-budget` (when set) and the cgroup's
// memory limit (when set), less a margin (AdmissionMargin: 5% of it, at
// least 64 MiB, for what the figures miss: the allocator's slack, the
// request bodies arriving meanwhile, the network threads). Without either
// there is no MemoryAdmission at all, and a batch costs one null check.
//
// Admit is the pure policy, tested with fake figures; MemoryAdmission holds
// the limit, reads the process (MemoryProbe) and keeps the bytes that the
// batches running now were admitted with (their reservations), so that two
// executors starting at once do not both spend the same headroom.
//
// Thread-safety: Admit is pure; MemoryAdmission's methods may be called
// from any thread (its mutex guards the reservations; the probe's functions
// are thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "scheduler/activation_memory.h"

namespace inferd::scheduler {

// The margin kept below a limit: 5% of it, at least 64 MiB (at most half of it).
int64_t AdmissionMargin(int64_t limit);

struct AdmissionFigures {
  int64_t limit = 0;     // bytes, the margin already taken off
  int64_t resident = 0;  // the process's resident bytes now
  int64_t reserved = 0;  // what the batches running now were admitted with
};

struct AdmissionDecision {
  // Requests of the batch (a prefix, in its order) to run now; the rest stay
  // queued. 0 only with `refuse` or `wait`.
  size_t run = 0;
  // The first request fits on an idle process but not beside the batches
  // running now: wait for one of them to end, then decide again.
  bool wait = false;
  // The first request cannot fit even alone on an otherwise idle process
  // (resident less the running batches' reservations): answer it 413.
  bool refuse = false;
  int64_t needed = 0;        // bytes the run prefix (or the refused request) needs
  AdmissionFigures figures;  // what the decision was made on (for messages)
};

// `prefix_needs[k]`: the bytes the batch's first k+1 requests need together
// (non-decreasing; a text batch's padded length is its longest). The prefix
// run is the longest with resident + reserved + need <= limit (the resident
// memory may already hold part of what the running batches reserved: the
// sum errs high). When not even the first request fits so, it waits for the
// running batches if it would fit on an idle process (resident - reserved +
// need <= limit), and is refused if not. Pure.
AdmissionDecision Admit(const std::vector<int64_t>& prefix_needs, const AdmissionFigures& figures);

class MemoryAdmission {
 public:
  struct Options {
    int64_t limit = 0;         // bytes before the margin; > 0
    std::string limit_source;  // "--memory-budget 2 GiB", "cgroup v2 .../memory.max", in messages
    MemoryProbe probe;         // resident, and release_free before a cut
  };
  explicit MemoryAdmission(Options options);

  // The limit less the margin.
  int64_t limit() const { return limit_; }
  const std::string& limit_source() const { return options_.limit_source; }

  // Decides on a batch whose prefixes need `prefix_needs`; reserves the run
  // prefix's need until Release. Before a cut, a wait or a refusal the
  // allocator's free pages go back to the system and the process is read
  // again (pages that freed activations left in the allocator would
  // otherwise count twice). A wait blocks the calling executor until a
  // running batch releases its reservation (re-reading at least every
  // 100 ms), then decides again; it never returns `wait`. Reads /proc
  // (a few microseconds): only called with a limit.
  AdmissionDecision Decide(const std::vector<int64_t>& prefix_needs) EXCLUDES(mu_);
  void Release(int64_t reserved) EXCLUDES(mu_);

  // The answer to a request that can never fit: kPayloadTooLarge (413; gRPC
  // INVALID_ARGUMENT: it must not be retried as it is), the figures in the
  // message.
  Status Refusal(const std::string& model, const AdmissionDecision& decision, int items,
                 int64_t tokens) const;

 private:
  AdmissionFigures Read() const REQUIRES(mu_);

  const Options options_;
  const int64_t limit_;
  Mutex mu_;
  CondVar released_;  // a reservation was released
  int64_t reserved_ GUARDED_BY(mu_) = 0;
};

}  // namespace inferd::scheduler
