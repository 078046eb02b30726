#include "scheduler/internal/scheduled_model.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <utility>

namespace inferd::scheduler {
namespace {

metrics::Labels LabelsOf(const ModelSpec& spec) {
  return {{"model", spec.config.name}, {"version", spec.version}};
}

ScheduledModel::Metrics MakeMetrics(metrics::Registry* registry, const ModelSpec& spec) {
  ScheduledModel::Metrics m;
  if (!registry) return m;
  const metrics::Labels labels = LabelsOf(spec);
  auto rejected = [&](const std::string& reason) {
    metrics::Labels with_reason = labels;
    with_reason["reason"] = reason;
    return registry->ShareCounter("inferd_rejected_total",
                                  "requests answered without compute, by reason", with_reason);
  };
  m.queue_depth =
      registry->ShareGauge("inferd_queue_depth", "requests queued, not yet running", labels);
  m.queue_full = rejected("queue_full");
  m.deadline = rejected("deadline");
  m.cancelled = rejected("cancelled");
  m.draining = rejected("draining");
  m.queue_bytes = rejected("queue_bytes");
  m.late_results = registry->ShareCounter(
      "inferd_late_results_total",
      "results dropped because their request was answered first (deadline while running, batch "
      "given up)",
      labels);
  m.wide_batches = registry->ShareCounter(
      "inferd_lone_wide_batches_total",
      "batches of one lone request run on the cores of the executors idle at the time", labels);
  return m;
}

BatchRunner::Metrics MakeRunnerMetrics(metrics::Registry* registry, const ModelSpec& spec) {
  BatchRunner::Metrics m;
  if (!registry) return m;
  const metrics::Labels labels = LabelsOf(spec);
  m.batch_sizes = registry->ShareHistogram("inferd_batch_size", "items per executed batch", labels,
                                           metrics::BatchSizeBuckets());
  m.padded_tokens = registry->ShareCounter(
      "inferd_padded_tokens_total",
      "padding run in batches of requests of different lengths (pad_value)", labels);
  m.real_tokens = registry->ShareCounter(
      "inferd_real_tokens_total", "the requests' own tokens, in models with a pad_value", labels);
  if (spec.config.backend == config::BackendKind::kPython ||
      spec.config.isolation == config::Isolation::kProcess) {
    m.worker_resident_bytes = registry->ShareGauge(
        "inferd_worker_resident_bytes",
        "resident memory of the model's worker processes (handlers, isolation: process), read "
        "after each batch",
        labels);
    if (spec.model) {
      m.worker_resident_bytes->Set(static_cast<double>(spec.model->WorkerResidentBytes()));
    }
  }
  auto admission = [&](const std::string& outcome) {
    metrics::Labels with_outcome = labels;
    with_outcome["outcome"] = outcome;
    return registry->ShareCounter(
        "inferd_memory_admission_total",
        "batches cut smaller (cut) and requests refused (refused) because their activations "
        "would not fit under the memory limit",
        with_outcome);
  };
  m.admission_cut = admission("cut");
  m.admission_refused = admission("refused");
  return m;
}

QueueSpec QueueSpecFor(const ModelSpec& spec) {
  QueueSpec q = QueueSpecOf(spec.name, spec.config, static_cast<bool>(spec.hooks.preprocess));
  q.max_concurrency = spec.max_concurrency;
  q.executor_ids = spec.executor_ids;
  return q;
}

BatchRunner::Options RunnerOptions(const ModelSpec& spec, Clock* clock,
                                   metrics::Registry* registry,
                                   std::shared_ptr<MemoryAdmission> admission) {
  BatchRunner::Options o;
  o.name = spec.name;
  o.config = spec.config;
  o.model = spec.model;
  o.hooks = spec.hooks;
  o.quarantine = spec.quarantine;
  o.clock = clock;
  o.metrics = MakeRunnerMetrics(registry, spec);
  o.forward_mark = spec.forward_mark;
  o.admission = std::move(admission);
  return o;
}

// The queue's view of a calibration: nullopt when it is not calibrated.
std::optional<ModelQueue::MeasuredSizes> MeasuredSizesOf(const BatchCalibration& c) {
  if (!c.calibrated) return std::nullopt;
  ModelQueue::MeasuredSizes m;
  m.max_batch = c.max_batch;
  m.sizes = c.chosen_sizes();
  if (!c.sizes.empty()) m.batch1_s = c.sizes.front().latency_ms / 1000;
  for (const BatchCalibration::Size& s : c.sizes) {
    m.slowest_ms = std::max(m.slowest_ms, s.latency_ms);
  }
  return m;
}

}  // namespace

ScheduledModel::ScheduledModel(ModelSpec spec, Mutex* mu, Clock* clock, metrics::Registry* registry,
                               int executors, MemoryProbe probe,
                               std::shared_ptr<MemoryAdmission> admission)
    : mu_(mu),
      spec_(std::move(spec)),
      metrics_(MakeMetrics(registry, spec_)),
      queue_(QueueSpecFor(spec_), mu),
      runner_(RunnerOptions(spec_, clock, registry, std::move(admission))),
      calibrator_({spec_.name, spec_.config, spec_.model, clock, std::move(probe),
                   spec_.forward_mark}) {
  queue_.set_executors(executors);
}

void ScheduledModel::AssertLockedBy([[maybe_unused]] Mutex* held) const { assert(held == mu_); }

void ScheduledModel::SetCalibration(BatchCalibration calibration) {
  if (!calibration.activation.measured()) calibration.activation = calibration_.activation;
  calibration_ = std::move(calibration);
  if (calibration_.by_length) runner_.set_length_cost(calibration_.length_cost);
  if (calibration_.activation.measured()) runner_.set_activation(calibration_.activation);
  queue_.AssertLockedBy(mu_);
  queue_.SetMeasuredSizes(MeasuredSizesOf(calibration_));
}

void ScheduledModel::SetActivation(const ActivationMemory& activation) {
  if (!activation.measured()) return;
  calibration_.activation = activation;
  runner_.set_activation(activation);
}

void ScheduledModel::PublishDepth() const {
  queue_.AssertLockedBy(mu_);
  if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
}

}  // namespace inferd::scheduler
