// Mirror: one primary model's traffic mirroring (docs/MIRROR.md).
//
// Tap sees every request for the primary on its way to the queue. A
// deterministic counter picks `fraction` of them (request n is mirrored when
// floor((n+1)f) > floor(nf): exactly f of any long run, evenly spread). A
// picked request is copied (the tensors it carries, shared, not copied; or
// its raw payloads for a model that pre-processes, copied): what the
// candidate gets is the request as the primary got it, before the primary's
// own pre-processing. The primary's completion is wrapped: it answers the
// client first, then (on the same executor thread, which only queues) sends
// the copy to the candidate. The primary therefore never waits for the
// candidate, and mirrored work is only queued once the primary's own work
// for that request is done. At most max_in_flight copies are out (from the
// pick to the candidate's answer); a pick past that is dropped and counted.
// When the candidate answers, its outputs are compared with the primary's
// (comparison.h) on the candidate's completion thread.
//
// Copies take only spare capacity (issue 38). A local candidate's copy is
// queued at scheduler::kSparePriority: the scheduler refuses it when no
// executor is idle, and lets at most all executors but one run such copies;
// a refused copy is dropped and counted (no_spare_executor). A candidate
// whose latency is more than kSlowFactor times its primary's (taken as at
// least 5 ms; the median ratio of the last 15 pairs, three at least; candidate_slowdown in the report) is sampled
// down: only kSlowFactor / that ratio of the picks are sent
// (effective_fraction; the others count as sampled_down), so that its copies
// cost about kSlowFactor times the primary's own time at most.
//
// Metrics (label model = the primary):
//   inferd_mirror_requests_total{model, outcome}  outcome = mirrored | dropped | compared |
//       mismatched | candidate_error | candidate_timeout | primary_error | no_spare_executor |
//       sampled_down
//   inferd_mirror_in_flight{model}                gauge
//   inferd_mirror_top1_agreement{model}           gauge, classifier outputs only
//   inferd_mirror_max_abs_error{model}            gauge
//   inferd_mirror_mean_abs_error{model}           gauge
//   inferd_mirror_latency_seconds{model, side}    histogram, side = primary | candidate
//
// Thread-safety: Tap and Report may be called from any thread. A Mirror may
// be destroyed with copies in flight: their answers are then dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "config/mirror_config.h"
#include "metrics/registry.h"
#include "mirror/candidate.h"
#include "mirror/comparison.h"
#include "scheduler/inference_request.h"

namespace inferd::mirror {

// Whether request n (0-based) of a stream is mirrored at `fraction`.
bool Picked(uint64_t n, double fraction);

// How many times slower than its primary a candidate may be before its
// copies are sampled down (see the top).
inline constexpr double kSlowFactor = 4;

struct MirrorReport {
  std::string model;
  config::MirrorConfig config;
  std::string candidate_kind;  // local | remote
  int64_t seen = 0;            // requests of the primary since the mirror was set
  int64_t mirrored = 0;        // copies sent (or to be sent) to the candidate
  int64_t dropped = 0;         // picks refused because max_in_flight were out
  int64_t candidate_errors = 0;
  int64_t candidate_timeouts = 0;
  int64_t primary_errors = 0;  // the primary failed: nothing to compare
  int64_t in_flight = 0;
  int64_t no_spare_executor = 0;  // copies refused: no executor was spare
  int64_t sampled_down = 0;       // picks not sent: the candidate is slow (see the top)
  // fraction, times the share kept when the candidate is slow (see the top).
  double effective_fraction = 0;
  // The median of candidate / primary latency over the last 15 pairs
  // compared (or timed out), the primary's taken as at least 5 ms; 0 until
  // three were.
  double candidate_slowdown = 0;
  std::string last_candidate_error;
  ComparisonSummary comparison;
};

class Mirror {
 public:
  struct Options {
    std::string model;  // the primary's name
    config::MirrorConfig config;
    metrics::Registry* metrics = nullptr;  // may be null
    Clock* clock = Clock::Real();
    int top_k = 10;  // disagreements listed
  };

  static StatusOr<std::unique_ptr<Mirror>> Create(const Options& options,
                                                  std::shared_ptr<Candidate> candidate);
  ~Mirror();

  // See above: returns `done` itself when the request is not mirrored.
  scheduler::Completion Tap(const scheduler::InferenceRequest& request,
                            scheduler::Completion done);

  MirrorReport Report() const;
  const config::MirrorConfig& config() const;

 private:
  struct State;
  Mirror(std::shared_ptr<State> state, std::shared_ptr<Candidate> candidate);
  std::shared_ptr<State> state_;
  std::shared_ptr<Candidate> candidate_;
};

}  // namespace inferd::mirror
