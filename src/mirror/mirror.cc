#include "mirror/mirror.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include "common/thread_annotations.h"

namespace inferd::mirror {

bool Picked(uint64_t n, double fraction) {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  return std::floor(static_cast<double>(n + 1) * fraction) >
         std::floor(static_cast<double>(n) * fraction);
}

struct Mirror::State {
  explicit State(const Options& o, std::string k)
      : options(o), kind(std::move(k)), comparison({o.top_k, 4096}) {}

  const Options options;
  const std::string kind;
  std::atomic<uint64_t> seen{0};
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> mirrored{0}, dropped{0}, candidate_errors{0}, candidate_timeouts{0},
      primary_errors{0};

  mutable Mutex mu;
  Comparison comparison GUARDED_BY(mu);
  std::string last_error GUARDED_BY(mu);
  // candidate / primary latency of the last kRatios pairs (a ring), for the
  // sample-down; their median, once kMinRatios were seen.
  static constexpr size_t kRatios = 15;
  static constexpr size_t kMinRatios = 3;
  // A primary is taken as at least this slow: a candidate of a few ms is
  // never sampled down for its queueing noise.
  static constexpr double kPrimaryFloorMs = 5;
  std::vector<double> ratios GUARDED_BY(mu);
  size_t next_ratio GUARDED_BY(mu) = 0;
  double slowdown GUARDED_BY(mu) = 0;
  // The share of picks kept (1: all; see Mirror's header), read in Tap.
  std::atomic<double> keep{1.0};
  std::atomic<int64_t> no_spare{0};
  std::atomic<uint64_t> picks{0};
  std::atomic<int64_t> sampled_down{0};

  // A pair of latencies (ms) measured. A median, not an average: the first
  // copy to a lazy candidate also waits for its load. A candidate whose
  // median is more than kSlowFactor times its primary's latency keeps only
  // kSlowFactor / median of the picks.
  void ObservePair(double primary_ms, double candidate_ms) {
    MutexLock lock(&mu);
    const double ratio = candidate_ms / std::max(primary_ms, kPrimaryFloorMs);
    if (ratios.size() < kRatios) {
      ratios.push_back(ratio);
    } else {
      ratios[next_ratio] = ratio;
    }
    next_ratio = (next_ratio + 1) % kRatios;
    if (ratios.size() < kMinRatios) return;
    std::vector<double> sorted = ratios;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    slowdown = sorted[sorted.size() / 2];
    keep.store(slowdown > kSlowFactor ? kSlowFactor / slowdown : 1.0);
  }

  metrics::Labels Labels() const { return {{"model", options.model}}; }

  // Looked up at each event, not held: the repository removes a model's
  // series when it leaves memory, and they must come back with it.
  void Count(std::atomic<int64_t>* counter, const char* outcome) {
    counter->fetch_add(1, std::memory_order_relaxed);
    if (!options.metrics) return;
    options.metrics
        ->ShareCounter("inferd_mirror_requests_total",
                       "the primary's requests picked for mirroring, by what became of them",
                       {{"model", options.model}, {"outcome", outcome}})
        ->Increment();
  }

  void SetInFlight() {
    if (!options.metrics) return;
    options.metrics
        ->ShareGauge("inferd_mirror_in_flight", "mirrored requests sent and not yet answered",
                     Labels())
        ->Set(static_cast<double>(in_flight.load()));
  }

  void EndInFlight() {
    in_flight.fetch_sub(1);
    SetInFlight();
  }

  void ObserveLatency(const char* side, double ms) {
    if (!options.metrics) return;
    auto labels = Labels();
    labels["side"] = side;
    options.metrics
        ->ShareHistogram("inferd_mirror_latency_seconds",
                         "mirrored requests: the primary's and the candidate's latency", labels,
                         metrics::LatencyBuckets())
        ->Observe(ms * 1e-3);
  }

  void Compared(const scheduler::InferenceRequest& copy, uint64_t seq,
                const std::vector<NamedTensor>& primary, double primary_ms,
                const std::vector<NamedTensor>& candidate, double candidate_ms) {
    const PairDiff diff = ComparePair(primary, candidate);  // outside the lock
    Count(diff.mismatch.empty() ? &compared : &mismatched,
          diff.mismatch.empty() ? "compared" : "mismatched");
    ObserveLatency("primary", primary_ms);
    ObserveLatency("candidate", candidate_ms);
    ObservePair(primary_ms, candidate_ms);
    ComparisonSummary totals;
    {
      MutexLock lock(&mu);
      comparison.Record(diff, primary_ms, candidate_ms, [&] { return MakeInputRef(seq, copy); });
      if (!diff.mismatch.empty()) last_error = diff.mismatch;
      totals = comparison.Summarize(/*with_latency=*/false);
    }
    if (!options.metrics) return;
    const auto labels = Labels();
    if (totals.top1_agreement) {
      options.metrics
          ->ShareGauge("inferd_mirror_top1_agreement",
                       "share of classifier rows whose arg-max the candidate matched", labels)
          ->Set(*totals.top1_agreement);
    }
    options.metrics
        ->ShareGauge("inferd_mirror_max_abs_error",
                     "largest absolute difference seen between the two sides' outputs", labels)
        ->Set(totals.max_abs_error);
    options.metrics
        ->ShareGauge("inferd_mirror_mean_abs_error",
                     "mean absolute difference over every output element compared", labels)
        ->Set(totals.mean_abs_error);
  }

  std::atomic<int64_t> compared{0}, mismatched{0};
};

namespace {

double MillisSince(Clock* clock, TimePoint start) {
  return std::chrono::duration<double, std::milli>(clock->Now() - start).count();
}

}  // namespace

StatusOr<std::unique_ptr<Mirror>> Mirror::Create(const Options& options,
                                                 std::shared_ptr<Candidate> candidate) {
  RETURN_IF_ERROR(config::ValidateMirrorConfig(options.config));
  if (!candidate) return InvalidArgument("mirror of '" + options.model + "': no candidate");
  auto state = std::make_shared<State>(options, candidate->kind());
  state->SetInFlight();
  return std::unique_ptr<Mirror>(new Mirror(std::move(state), std::move(candidate)));
}

Mirror::Mirror(std::shared_ptr<State> state, std::shared_ptr<Candidate> candidate)
    : state_(std::move(state)), candidate_(std::move(candidate)) {}

Mirror::~Mirror() = default;

const config::MirrorConfig& Mirror::config() const { return state_->options.config; }

scheduler::Completion Mirror::Tap(const scheduler::InferenceRequest& request,
                                  scheduler::Completion done) {
  const uint64_t n = state_->seen.fetch_add(1, std::memory_order_relaxed);
  if (!Picked(n, state_->options.config.fraction)) return done;
  // The sample-down of a slow candidate: a second stage over the picks.
  const uint64_t pick = state_->picks.fetch_add(1, std::memory_order_relaxed);
  if (!Picked(pick, state_->keep.load())) {
    state_->Count(&state_->sampled_down, "sampled_down");
    return done;
  }
  if (state_->in_flight.fetch_add(1) >= state_->options.config.max_in_flight) {
    state_->in_flight.fetch_sub(1);
    state_->Count(&state_->dropped, "dropped");
    return done;
  }
  state_->Count(&state_->mirrored, "mirrored");
  state_->SetInFlight();
  // The copy: tensors share their bytes; raw payloads are copied. No
  // cancellation: the candidate's answer is wanted after the client has gone.
  auto copy = std::make_shared<scheduler::InferenceRequest>();
  copy->id = request.id;
  copy->inputs = request.inputs;
  copy->raw = request.raw;
  copy->priority = scheduler::kSparePriority;  // only on an executor nobody else wants
  Clock* clock = state_->options.clock;
  const TimePoint start = clock->Now();
  std::weak_ptr<Candidate> weak = candidate_;
  return [state = state_, weak, copy, start, n, clock,
          done = std::move(done)](StatusOr<scheduler::InferenceResponse> result) {
    const double primary_ms = MillisSince(clock, start);
    std::vector<NamedTensor> primary;
    if (result.ok()) primary = result->outputs;  // shared bytes
    const bool ok = result.ok();
    done(std::move(result));  // the client's answer goes first
    if (!ok) {
      state->Count(&state->primary_errors, "primary_error");
      return state->EndInFlight();
    }
    auto candidate = weak.lock();
    if (!candidate) return state->EndInFlight();  // the mirror was removed
    const TimePoint sent = clock->Now();
    const TimePoint deadline =
        sent + std::chrono::milliseconds(state->options.config.timeout_ms);
    candidate->Send(*copy, deadline,
                    [state, copy, n, clock, sent, primary = std::move(primary),
                     primary_ms](StatusOr<std::vector<NamedTensor>> answer) {
                      const double candidate_ms = MillisSince(clock, sent);
                      if (answer.ok()) {
                        state->Compared(*copy, n, primary, primary_ms, *answer, candidate_ms);
                      } else if (answer.status().code() == StatusCode::kDeadlineExceeded) {
                        state->Count(&state->candidate_timeouts, "candidate_timeout");
                        // At least this slow: the sample-down must see it.
                        state->ObservePair(primary_ms, candidate_ms);
                      } else if (answer.status().code() == StatusCode::kResourceExhausted &&
                                 answer.status().message() == scheduler::kNoSpareExecutor) {
                        state->Count(&state->no_spare, "no_spare_executor");
                      } else {
                        state->Count(&state->candidate_errors, "candidate_error");
                        MutexLock lock(&state->mu);
                        state->last_error = answer.status().message();
                      }
                      state->EndInFlight();
                    });
  };
}

MirrorReport Mirror::Report() const {
  MirrorReport r;
  const State& s = *state_;
  r.model = s.options.model;
  r.config = s.options.config;
  r.candidate_kind = s.kind;
  r.seen = static_cast<int64_t>(s.seen.load());
  r.mirrored = s.mirrored.load();
  r.dropped = s.dropped.load();
  r.candidate_errors = s.candidate_errors.load();
  r.candidate_timeouts = s.candidate_timeouts.load();
  r.primary_errors = s.primary_errors.load();
  r.in_flight = s.in_flight.load();
  r.no_spare_executor = s.no_spare.load();
  r.sampled_down = s.sampled_down.load();
  r.effective_fraction = s.options.config.fraction * s.keep.load();
  MutexLock lock(&s.mu);
  r.candidate_slowdown = s.slowdown;
  r.last_candidate_error = s.last_error;
  r.comparison = s.comparison.Summarize();
  return r;
}

}  // namespace inferd::mirror
