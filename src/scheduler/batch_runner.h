// BatchRunner: one model version's execution of a batch on an executor
// thread, from queued requests to answers: pre-processing per request,
// assembly, Model::Execute, split and post-processing. The queue only forms
// batches (model_queue.h); the scheduler hands each to the model's runner.
// The runner sees no queue: requests reach a running batch, or go back to
// the queue, only through the TopUp and GiveBack callbacks the scheduler
// gives Run. It is the one recorder of inferd_batch_size (Metrics).
//
// Every request of a batch is answered exactly once, whatever happens. A
// stage that fails answers the requests it concerns with its Status; a stage
// that throws (std::bad_alloc, cv::Exception, anything a hook throws) answers
// them kInternal, with a message naming the model and the stage ("model
// 'm:1': pre-processing threw: ..."), and Run returns normally: the executor
// thread lives on.
//
// Buffers: the batched inputs that assembly makes (one per input of a batch
// of several requests) take their bytes from the runner's TensorPool, so the
// executors running this model reuse a few buffers instead of allocating per
// batch. A model with hooks.preprocess_into (one input of fixed dims: an
// image model) skips assembly: a batch of raw requests gets a pooled tensor
// of max_batch_size rows first, and each request is pre-processed straight
// into its rows (grown, with a copy, in the unexpected case that a batch
// outgrows it); the model runs on a view of the rows in use. A buffer goes
// back to the pool only when its last handle does: an output that aliases its
// input (an identity model), and every response slice of it, keep it out of
// the pool until they are gone (tensor_pool.h).
//
// Variable lengths (length_buckets.h): for a model with an input of a
// variable dim and a pad_value (a text model's input_ids), a batch of
// several requests is cut after pre-processing into sub-batches of similar
// length by the modelled cost (set_length_cost; DefaultLengthCost until
// then). The group of the oldest request runs first; with a GiveBack the
// other groups go back to the queue, pre-processed, before it runs, so that
// an idle executor takes them at once and an executor never commits to more
// than one forward ahead (a plan of several long groups run in turn by one
// executor was the p99 of mixed-length texts: docs/TEXT.md). Without one,
// or when the queue refuses them, they run here in turn, shortest first.
// The tokens computed (padding) and the real ones are counted in the token
// counters (Metrics) when they are set.
//
// Memory admission (memory_admission.h), with Options::admission (a memory
// limit is set) and once the model's activation memory is measured
// (set_activation): before each group runs, its need (bytes per item x
// items, or per token x items x padded length) is checked against the limit
// in queue order: the longest prefix that fits runs, the rest goes back to
// the queue through GiveBack (or, without one, or for a batch pre-processed
// into rows, runs here next, admitted in turn); a request that cannot fit
// even alone on an otherwise idle process is answered kPayloadTooLarge with
// the figures (MemoryAdmission::Refusal). Counted in Metrics::admission_cut
// and admission_refused. Without admission, one null check per batch.
//
// Thread-safety: Run may be called from several executor threads at once
// (the model's Execute allows it); the pool and the length cost (its own
// mutex) are the runner's mutable state, both thread-safe.
// Ownership: the runner shares the model and hooks; the batch's requests are
// owned by Run until each is answered.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/clock.h"
#include "common/tensor_pool.h"
#include "common/thread_annotations.h"
#include "metrics/registry.h"
#include "scheduler/batch.h"
#include "scheduler/activation_memory.h"
#include "scheduler/length_buckets.h"
#include "scheduler/memory_admission.h"
#include "scheduler/model_spec.h"

namespace inferd::scheduler {

class BatchRunner {
 public:
  // The runner's series of its model version; any may be null.
  struct Metrics {
    // Items per forward (inferd_batch_size). The runner is the one place
    // that records it: once per call of the model, so that requests a
    // batch gives back to the queue, or that join it while it is
    // pre-processed, count once.
    std::shared_ptr<metrics::Histogram> batch_sizes;
    // Models cut by length: the padding tokens run and the real ones
    // (padding waste = padded / real).
    std::shared_ptr<metrics::Counter> padded_tokens;
    std::shared_ptr<metrics::Counter> real_tokens;
    // Models run in worker processes: their resident memory, read after
    // each forward (backend::Model::WorkerResidentBytes).
    std::shared_ptr<metrics::Gauge> worker_resident_bytes;
    // Memory admission: batches cut smaller, requests refused.
    std::shared_ptr<metrics::Counter> admission_cut;
    std::shared_ptr<metrics::Counter> admission_refused;
  };
  struct Options {
    std::string name;  // "model:version", in messages
    config::ModelConfig config;
    std::shared_ptr<backend::Model> model;
    ModelHooks hooks;
    Clock* clock = Clock::Real();  // times pre-processing and the forward
    Metrics metrics;
    // ModelSpec::quarantine: called when a failed Execute leaves the model
    // with a backend::Model::QuarantineReason (a handler that keeps dying).
    std::function<void(const std::string& reason)> quarantine;
    journal::ForwardMark forward_mark;  // around each forward (crash journal)
    // The process's memory limit, shared by every model; null: none.
    std::shared_ptr<MemoryAdmission> admission;
  };
  explicit BatchRunner(Options options);

  // Called after each round of pre-processing with the batch's items so far:
  // further requests (raw payloads) that join the batch, or none when it is
  // complete. Lets requests that arrive while the batch is pre-processed run
  // in it instead of waiting for the next one.
  using TopUp = std::function<std::vector<QueuedRequest>(int items)>;

  // Takes requests of a running batch back into the queue, each in its
  // place, for the next executor free to run them: true, and `requests` are
  // moved from; or false, and they stay with the runner (the scheduler is
  // stopping, the model is being removed, or the batch was given up).
  using GiveBack = std::function<bool(std::vector<QueuedRequest>& requests)>;

  // Runs `requests` as one batch; `start` is when the executor took them
  // (their queue time ends there). With `top_up`, requests it returns are
  // appended to `requests`, pre-processed and run in the same batch. With
  // `give_back`, a batch cut by length runs one group and gives the rest
  // back (above). Answers every request it does not give back; never throws.
  void Run(std::vector<QueuedRequest>& requests, TimePoint start, const TopUp& top_up = nullptr,
           const GiveBack& give_back = nullptr);

  // The cost model that cuts batches by length (from the calibration).
  void set_length_cost(const LengthCost& cost) EXCLUDES(cost_mu_);
  LengthCost length_cost() const EXCLUDES(cost_mu_);
  // What a forward needs per item (and per token), from the calibration or
  // one measured forward; admission waits for it (unmeasured: not checked).
  void set_activation(const ActivationMemory& activation) EXCLUDES(cost_mu_);
  ActivationMemory activation() const EXCLUDES(cost_mu_);
  // Whether batches are cut by length: the input that gives the length (a
  // variable dim and a pad_value), or -1.
  int length_input() const { return length_input_; }

  const std::string& name() const { return options_.name; }
  // The batch input pool's counters (reuse, allocations), for tests.
  TensorPool::Stats input_pool_stats() const { return input_pool_.stats(); }

 private:
  struct Pending;
  class Rows;
  void RunStages(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                 TimePoint start, const TopUp& top_up, const GiveBack& give_back,
                 const char** stage);
  // The groups of a batch cut by length that run here, in order: all of
  // them, or the oldest request's alone when `give_back` took the others.
  std::vector<std::vector<size_t>> KeepOrGiveBack(std::vector<QueuedRequest>& requests,
                                                  std::vector<Pending>& pending,
                                                  const std::vector<size_t>& live,
                                                  const GiveBack& give_back) const;
  // Memory admission of `group` (see the top), then RunGroup on what fits.
  // `rows`: the batch pre-processed into rows, `group` being all of them.
  void RunAdmitted(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                   const std::vector<size_t>& group, TimePoint start, const Tensor* rows,
                   const GiveBack& give_back, const char** stage);
  // Bytes the first k+1 requests of `group` need together, for each k.
  std::vector<int64_t> PrefixNeeds(const std::vector<QueuedRequest>& requests,
                                   const std::vector<size_t>& group,
                                   const ActivationMemory& activation) const;
  // Tokens per item of a request in the length input (1 when not by length).
  int64_t LengthOf(const QueuedRequest& request) const;
  // Assembly, forward, split and post-processing of the requests `group`;
  // with `rows`, their items are the rows from `first_row` on.
  void RunGroup(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                const std::vector<size_t>& group, TimePoint start, const Tensor* rows,
                int64_t first_row, const char** stage);
  // `live` cut by length (one group when the model's batches are not).
  std::vector<std::vector<size_t>> Groups(const std::vector<QueuedRequest>& requests,
                                          const std::vector<size_t>& live) const;

  const Options options_;
  // Bytes of one item of the model's single input when pre-processing can
  // write into batch rows (hooks.preprocess_into, fixed dims); else 0.
  const size_t row_bytes_;
  TensorPool input_pool_;
  const int length_input_;
  mutable Mutex cost_mu_;
  LengthCost length_cost_ GUARDED_BY(cost_mu_) = DefaultLengthCost();
  ActivationMemory activation_ GUARDED_BY(cost_mu_);
};

}  // namespace inferd::scheduler
