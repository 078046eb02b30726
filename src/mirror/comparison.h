// Comparison: how a candidate's answers differ from the primary's, pair after
// pair (traffic mirroring, docs/MIRROR.md).
//
// ComparePair is a pure function of two answers: outputs are paired by name
// (by position when the candidate's names differ, e.g. a remote model named
// otherwise), and for each pair of numeric outputs of the same shape it gives
// the largest and the summed absolute difference over every element, and,
// for a classifier-shaped output ([batch, classes], classes >= 2), how many
// rows have the same arg-max (top-1). BYTES outputs count as agreeing when
// every byte is equal (max error 0 or 1). A pair whose outputs cannot be
// lined up (count, shape or dtype class differ) is "mismatched", not compared.
//
// Comparison accumulates those results: per output and overall, the latency
// of both sides over the last `latency_window` pairs (p50/p99), and the
// `top_k` pairs that disagreed most (top-1 disagreements first, then the
// largest absolute error), each with a reference to its inputs (an id, a hash
// and the first bytes), never the inputs themselves: memory stays bounded.
// Not thread-safe: the owner (mirror::Mirror) locks around Record and
// Summarize; ComparePair runs outside that lock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "scheduler/inference_request.h"

namespace inferd::mirror {

// One output of one pair.
struct OutputDiff {
  std::string name;  // the primary's name
  int64_t elements = 0;
  double max_abs_error = 0;
  double sum_abs_error = 0;
  double max_abs_primary = 0;  // the largest finite |primary| (the scale of a relative error)
  bool classifier = false;  // [batch, classes]: top-1 counted below
  int64_t top1_rows = 0;
  int64_t top1_agree = 0;
  int64_t first_primary_top1 = -1;    // row 0's arg-max on each side (classifiers)
  int64_t first_candidate_top1 = -1;
};

struct PairDiff {
  std::vector<OutputDiff> outputs;  // in the primary's order
  std::string mismatch;             // non-empty: why the answers could not be compared
  double max_abs_error() const;
  int64_t top1_disagree() const;    // rows whose arg-max differs, all classifier outputs
};

PairDiff ComparePair(const std::vector<NamedTensor>& primary,
                     const std::vector<NamedTensor>& candidate);

// What a listed disagreement keeps of its request.
struct InputRef {
  uint64_t seq = 0;       // the mirror's own count of mirrored requests
  std::string id;         // the request's id (v2 "id"), may be empty
  uint64_t hash = 0;      // FNV-1a 64 of every input's bytes, in order
  std::string head_hex;   // the first input's first bytes, in hex (at most 32 bytes)
  int64_t bytes = 0;      // all inputs' bytes
};
InputRef MakeInputRef(uint64_t seq, const scheduler::InferenceRequest& request);

struct Disagreement {
  InputRef input;
  double max_abs_error = 0;
  int64_t top1_disagree = 0;
  int64_t primary_top1 = -1;  // row 0 of the first classifier output
  int64_t candidate_top1 = -1;
};

struct OutputSummary {
  std::string name;
  int64_t compared = 0;  // pairs
  int64_t elements = 0;
  double max_abs_error = 0;
  double mean_abs_error = 0;                // over every element compared
  std::optional<double> top1_agreement;     // classifiers only: agreeing rows / rows
};

struct LatencySummary {
  double p50_ms = 0, p99_ms = 0;
  int64_t samples = 0;
};

struct ComparisonSummary {
  int64_t compared = 0;    // pairs compared
  int64_t mismatched = 0;  // pairs that could not be lined up
  double max_abs_error = 0;
  double mean_abs_error = 0;             // every element of every output
  std::optional<double> top1_agreement;  // every row of every classifier output
  std::vector<OutputSummary> outputs;
  LatencySummary primary, candidate;
  std::vector<Disagreement> top_disagreements;  // worst first
};

class Comparison {
 public:
  struct Options {
    int top_k = 10;
    int latency_window = 4096;
  };
  explicit Comparison(Options options) : options_(options) {}

  // Adds one compared (or mismatched) pair. `input` is called only when the
  // pair enters the top-K list.
  template <typename MakeRef>
  void Record(const PairDiff& diff, double primary_ms, double candidate_ms, MakeRef input) {
    AddLatency(primary_ms, candidate_ms);
    if (!diff.mismatch.empty()) {
      ++mismatched_;
      return;
    }
    AddDiff(diff);
    if (Keeps(diff)) Keep(diff, input());
  }
  // Only latencies (a pair whose answers were not compared).
  void AddLatency(double primary_ms, double candidate_ms);

  // `with_latency` false: no percentiles (cheap enough for every pair).
  ComparisonSummary Summarize(bool with_latency = true) const;

 private:
  struct OutputTotals {
    std::string name;
    int64_t compared = 0, elements = 0, top1_rows = 0, top1_agree = 0;
    double max_abs_error = 0, sum_abs_error = 0;
    bool classifier = false;
  };
  void AddDiff(const PairDiff& diff);
  bool Keeps(const PairDiff& diff) const;
  void Keep(const PairDiff& diff, InputRef input);

  Options options_;
  int64_t compared_ = 0, mismatched_ = 0;
  std::vector<OutputTotals> outputs_;
  std::deque<double> primary_ms_, candidate_ms_;
  std::vector<Disagreement> top_;  // worst first, at most top_k
};

}  // namespace inferd::mirror
