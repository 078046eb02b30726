#include "optimize/candidate_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "mirror/comparison.h"

namespace inferd::optimize {
namespace {

std::string RunName(const SampleRun& run, size_t index) {
  return run.alone ? "sample " + std::to_string(index + 1) + " alone"
                   : "a batch of " + std::to_string(run.items);
}

// Runs every sample; their outputs, or the first failure.
StatusOr<std::vector<std::vector<NamedTensor>>> RunAll(backend::Model& model,
                                                       const ComparisonSamples& samples) {
  std::vector<std::vector<NamedTensor>> outputs;
  size_t alone = 0;
  for (const auto& run : samples.runs) {
    auto out = model.Execute(run.inputs);
    if (!out.ok()) {
      return Internal(RunName(run, alone) + ": " + out.status().message());
    }
    if (run.alone) ++alone;
    outputs.push_back(std::move(*out));
  }
  return outputs;
}

// The fastest of kTimedPasses passes over every run: the least disturbed by
// the other work of a shared machine.
constexpr int kTimedPasses = 3;

StatusOr<double> TimePerItem(backend::Model& model, const ComparisonSamples& samples) {
  int items = 0;
  for (const auto& run : samples.runs) items += run.items;
  double best = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < kTimedPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& run : samples.runs) {
      auto out = model.Execute(run.inputs);
      if (!out.ok()) return out.status();
    }
    best = std::min(
        best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
  }
  return items > 0 ? best / items : 0;
}

}  // namespace

StatusOr<ReferenceRun> RunReference(backend::Model& model, const ComparisonSamples& samples) {
  ReferenceRun ref;
  ASSIGN_OR_RETURN(ref.outputs, RunAll(model, samples));
  ASSIGN_OR_RETURN(ref.ms_per_item, TimePerItem(model, samples));
  return ref;
}

StatusOr<CandidateMeasure> MeasureCandidate(backend::Model& candidate,
                                            const ComparisonSamples& samples,
                                            const ReferenceRun& reference) {
  ASSIGN_OR_RETURN(auto outputs, RunAll(candidate, samples));
  CandidateMeasure m;
  size_t alone = 0;
  for (size_t r = 0; r < samples.runs.size() && r < reference.outputs.size(); ++r) {
    const SampleRun& run = samples.runs[r];
    const auto& ref = reference.outputs[r];
    // Paired by name: a candidate without one of the reference's outputs does not line up.
    for (const auto& o : ref) {
      const bool found = std::any_of(outputs[r].begin(), outputs[r].end(),
                                     [&](const NamedTensor& c) { return c.name == o.name; });
      if (!found) {
        return Internal(RunName(run, alone) + ": the candidate has no output '" + o.name + "'");
      }
    }
    const mirror::PairDiff diff = mirror::ComparePair(ref, outputs[r]);
    if (!diff.mismatch.empty()) return Internal(RunName(run, alone) + ": " + diff.mismatch);
    bool classifier = false, agreed = true;
    for (const auto& d : diff.outputs) {
      m.max_abs_error = std::max(m.max_abs_error, d.max_abs_error);
      const double rel = d.max_abs_error == 0    ? 0
                         : d.max_abs_primary > 0 ? d.max_abs_error / d.max_abs_primary
                                                 : std::numeric_limits<double>::infinity();
      m.max_rel_error = std::max(m.max_rel_error, rel);
      if (d.classifier) {
        classifier = true;
        agreed = agreed && d.top1_agree == d.top1_rows;
      }
    }
    if (run.alone) {
      ++alone;
      if (classifier) {
        ++m.top1_checked;
        if (agreed) ++m.top1_agreed;
      }
    }
  }
  ASSIGN_OR_RETURN(m.ms_per_item, TimePerItem(candidate, samples));
  return m;
}

}  // namespace inferd::optimize
