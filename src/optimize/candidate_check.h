// Runs the TorchScript reference and a candidate on the same samples and
// measures how far the candidate's outputs are from the reference's
// (docs/OPTIMIZE.md): the largest absolute error over every output element,
// the largest error relative to the largest |reference| of its output (the
// measure of docs/PRECISION.md), and top-1 agreement on classifier outputs
// ([batch, classes]) of the samples run alone. Outputs are paired by name
// (mirror::ComparePair, the comparison traffic mirroring uses).
//
// Timing: after the pass whose outputs are compared (which warms the model
// up), three more passes over the same runs are timed on the wall clock and
// the fastest gives ms per item: an indication on a shared machine, not a
// benchmark.
// Thread-compatible: one thread at a time per Model, as Execute allows.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"
#include "optimize/comparison_samples.h"

namespace inferd::optimize {

struct ReferenceRun {
  std::vector<std::vector<NamedTensor>> outputs;  // per SampleRun
  double ms_per_item = 0;
};

struct CandidateMeasure {
  double max_abs_error = 0;
  double max_rel_error = 0;
  int top1_agreed = 0;
  int top1_checked = 0;
  double ms_per_item = 0;
};

// kInternal naming the run when the model fails on one.
StatusOr<ReferenceRun> RunReference(backend::Model& model, const ComparisonSamples& samples);

// kInternal naming the run when the candidate fails on one or its outputs do
// not line up with the reference's (names, shapes).
StatusOr<CandidateMeasure> MeasureCandidate(backend::Model& candidate,
                                            const ComparisonSamples& samples,
                                            const ReferenceRun& reference);

}  // namespace inferd::optimize
