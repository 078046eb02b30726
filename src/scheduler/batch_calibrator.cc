#include "scheduler/batch_calibrator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "scheduler/internal/describe_exception.h"
#include "scheduler/length_buckets.h"

namespace inferd::scheduler {

BatchCalibrator::BatchCalibrator(Options options)
    : options_(std::move(options)), length_input_(LengthInput(options_.config)) {}

double BatchCalibrator::SecondsSince(TimePoint start) const {
  return std::chrono::duration<double>(options_.clock->Now() - start).count();
}

namespace {

// A model whose first forward of batch 1 takes longer is not calibrated:
// the ladder would cost at least four such forwards per size at load.
constexpr double kSlowForwardMs = 1000;

// One forward's cost in ms by `timer`, or -1 with `failure` set when the
// model failed or threw.
double TimeForward(backend::Model& model, const journal::ForwardMark& mark,
                   const CallTimer& timer, const std::vector<NamedTensor>& inputs,
                   std::string* failure) {
  Status status;
  const double ms = timer([&] {
    try {
      journal::ForwardScope running(mark);  // the crash journal's mark
      status = model.Execute(inputs).status();
    } catch (...) {
      status = Internal(internal::DescribeException(std::current_exception()));
    }
  });
  if (status.ok()) return ms;
  *failure = status.message();
  return -1;
}

// Zero inputs of `batch` items in config order; empty when an input has
// variable dims or is BYTES (no representative input can be made).
std::vector<NamedTensor> ZeroInputs(const config::ModelConfig& config, int batch) {
  std::vector<NamedTensor> inputs;
  for (const config::TensorSpec& spec : config.inputs) {
    if (spec.dtype == DataType::kBytes) return {};
    Shape shape{batch};
    for (int64_t d : spec.dims) {
      if (d < 0) return {};
      shape.push_back(d);
    }
    inputs.push_back({spec.name, Tensor::Allocate(spec.dtype, std::move(shape))});
  }
  return inputs;
}

}  // namespace

BatchCalibration BatchCalibrator::Calibrate(const CalibrationOptions& options) const {
  const config::ModelConfig& config = options_.config;
  BatchCalibration c;
  if (config.max_batch_size <= 1) {
    c.note = "max_batch_size 1: nothing to calibrate";
    return c;
  }
  if (!config.dynamic_batching.calibrate) {
    c.note = "calibrate: false in config.yaml";
    return c;
  }
  if (length_input_ >= 0) return CalibrateLengths(options);
  if (ZeroInputs(config, 1).empty()) {
    c.note = "not calibrated: an input has variable dims or is BYTES";
    return c;
  }
  const TimePoint start = options_.clock->Now();
  auto elapsed_s = [&] { return SecondsSince(start); };
  // One call's cost in ms, or a negative value when the model failed.
  std::string failure;
  auto time_call = [&](const std::vector<NamedTensor>& inputs) {
    return TimeForward(*options_.model, options_.forward_mark, options.timer, inputs, &failure);
  };

  // Warm each size twice (the graph executor profiles a new shape, oneDNN
  // makes its kernels, the allocator grows), growing the ladder while two
  // warm and two timed calls per size fit the budget, which batch 1's cost
  // scales (CalibrationBudget).
  std::vector<std::vector<NamedTensor>> inputs;
  double ms_per_item_b1 = 0;
  double budget_s = options.budget_s;
  const auto max_batch_ms = static_cast<double>(config.dynamic_batching.max_batch_latency_ms);
  for (int batch : CalibrationLadder(config.max_batch_size)) {
    if (batch > 1 && elapsed_s() + 4 * ms_per_item_b1 * batch / 1e3 > budget_s) {
      c.note += "ladder stopped before batch " + std::to_string(batch) + "; ";
      break;
    }
    if (!WorthMeasuring(batch, ms_per_item_b1, max_batch_ms)) {
      c.note += "not measured from batch " + std::to_string(batch) +
                ": it would take over max_batch_latency_ms (" +
                std::to_string(config.dynamic_batching.max_batch_latency_ms) +
                ") even at half of batch 1's cost per item; ";
      break;
    }
    inputs.push_back(ZeroInputs(config, batch));
    double ms = 0;
    for (int k = 0; k < 2 && ms >= 0; ++k) {
      ms = time_call(inputs.back());
      if (batch == 1 && k == 0 && ms > kSlowForwardMs) {
        // Two warm calls and two timed rounds would take seconds each.
        BatchCalibration slow;
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "not calibrated: a forward of batch 1 took %.0f ms; measuring batch sizes "
                      "would pass the load-time budget (batch 1 at most %.0f ms)",
                      ms, kSlowForwardMs);
        slow.note = buf;
        return slow;
      }
    }
    if (ms < 0) {
      BatchCalibration failed;
      failed.note = "not calibrated: the model failed on zero inputs of batch " +
                    std::to_string(batch) + ": " + failure;
      return failed;
    }
    if (batch == 1) {
      ms_per_item_b1 = ms;
      budget_s = CalibrationBudget(options, config.max_batch_size, ms, elapsed_s());
      char buf[96];
      std::snprintf(buf, sizeof buf, "budget %.2f s%s from batch 1's %.2f ms; ", budget_s,
                    budget_s >= options.max_budget_s ? " (the cap)" : "", ms);
      c.note = buf;
    }
    c.sizes.push_back({batch, INFINITY, 0, false});
  }
  // Timed rounds over the sizes, interleaved, so that a burst of load hits
  // every size alike; each size keeps its fastest call.
  int rounds = 0;
  for (; rounds < options.max_rounds; ++rounds) {
    if (rounds >= 2 && elapsed_s() > budget_s) break;
    for (size_t i = 0; i < c.sizes.size(); ++i) {
      const double ms = time_call(inputs[i]);
      if (ms < 0) {
        BatchCalibration failed;
        failed.note = "not calibrated: the model failed: " + failure;
        return failed;
      }
      c.sizes[i].latency_ms = std::min(c.sizes[i].latency_ms, ms);
    }
  }
  ChooseBatchSizes(options.min_gain, max_batch_ms, &c);
  if (!c.sizes.empty()) {
    c.activation = Measure(c.sizes.back().batch, 0, inputs.back());
  }
  c.calibrated = true;
  c.seconds = elapsed_s();
  c.note += std::to_string(rounds) + " timed rounds";
  return c;
}

ActivationMemory BatchCalibrator::Measure(int batch, int64_t length,
                                          const std::vector<NamedTensor>& inputs) const {
  if (!options_.probe.enabled() || inputs.empty()) return {};
  bool ok = true;
  ActivationMemory a = MeasureActivation(options_.probe, batch, length, [&] {
    try {
      journal::ForwardScope running(options_.forward_mark);
      ok = options_.model->Execute(inputs).ok();
    } catch (...) {
      ok = false;
    }
  });
  return ok ? a : ActivationMemory{};
}

double BatchCalibrator::TimeOneForward(const CallTimer& timer, std::string* failure,
                                       ActivationMemory* activation) const {
  const std::vector<NamedTensor> inputs = ZeroInputs(options_.config, 1);
  if (inputs.empty()) {
    *failure = "an input has variable dims or is BYTES";
    return -1;
  }
  double first = -1;
  const ActivationMemory a = MeasureActivation(
      activation ? options_.probe : MemoryProbe{}, 1, 0,
      [&] { first = TimeForward(*options_.model, options_.forward_mark, timer, inputs, failure); });
  if (activation && first >= 0) *activation = a;
  if (first < 0 || first > 1000) return first;
  return TimeForward(*options_.model, options_.forward_mark, timer, inputs, failure);
}

namespace {

// The longest length a model of variable lengths is measured at: its text
// pre-processing's max_length, else 128.
int64_t LongestLength(const config::ModelConfig& config) {
  return config.preprocess.kind == config::PreprocessKind::kText ? config.preprocess.max_length
                                                                 : 128;
}

// Inputs of `batch` items whose variable dims are `length`, every element 1
// (a text model's real tokens: id 1, mask 1); empty for BYTES inputs.
std::vector<NamedTensor> OnesInputs(const config::ModelConfig& config, int batch, int64_t length) {
  std::vector<NamedTensor> inputs;
  for (const config::TensorSpec& spec : config.inputs) {
    if (spec.dtype == DataType::kBytes) return {};
    Shape shape{batch};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? length : d);
    Tensor t = Tensor::AllocateUninitialized(spec.dtype, shape);
    const size_t elem = DataTypeSize(spec.dtype);
    std::vector<std::byte> one(elem);
    switch (spec.dtype) {
      case DataType::kFp32: {
        float v = 1;
        std::memcpy(one.data(), &v, elem);
        break;
      }
      case DataType::kFp64: {
        double v = 1;
        std::memcpy(one.data(), &v, elem);
        break;
      }
      case DataType::kBf16: {
        uint16_t v = 0x3f80;
        std::memcpy(one.data(), &v, elem);
        break;
      }
      case DataType::kFp16: {
        uint16_t v = 0x3c00;
        std::memcpy(one.data(), &v, elem);
        break;
      }
      default:
        one[0] = std::byte{1};
        break;  // integers and BOOL, little-endian
    }
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      std::memcpy(t.mutable_data() + static_cast<size_t>(e) * elem, one.data(), elem);
    }
    inputs.push_back({spec.name, std::move(t)});
  }
  return inputs;
}

}  // namespace

ActivationMemory BatchCalibrator::MeasureOneForward() const {
  if (!options_.probe.enabled()) return {};
  if (length_input_ >= 0) {
    const int64_t longest = LongestLength(options_.config);
    return Measure(1, longest, OnesInputs(options_.config, 1, longest));
  }
  return Measure(1, 0, ZeroInputs(options_.config, 1));
}

BatchCalibration BatchCalibrator::CalibrateLengths(const CalibrationOptions& options) const {
  const config::ModelConfig& config = options_.config;
  BatchCalibration c;
  const int64_t longest = LongestLength(config);
  std::vector<int64_t> lengths;
  for (int64_t l : {int64_t{16}, int64_t{64}, longest}) {
    l = std::min(l, longest);
    if (lengths.empty() || l > lengths.back()) lengths.push_back(l);
  }
  std::vector<int> batches = {1};
  if (config.max_batch_size > 1) batches.push_back(std::min(4, config.max_batch_size));
  const TimePoint start = options_.clock->Now();
  auto elapsed_s = [&] { return SecondsSince(start); };
  // Each shape is warmed by one call (the graph executor profiles it) and
  // timed by the next; later rounds, while the budget lasts, keep the
  // fastest call of each shape.
  std::string failure;
  auto timed = [&](const std::vector<NamedTensor>& inputs) {
    return TimeForward(*options_.model, options_.forward_mark, options.timer, inputs, &failure);
  };
  for (int round = 0; round < 3 && (round == 0 || elapsed_s() < options.budget_s); ++round) {
    size_t k = 0;
    for (int64_t length : lengths) {
      for (int batch : batches) {
        const std::vector<NamedTensor> inputs = OnesInputs(config, batch, length);
        double ms = round == 0 ? timed(inputs) : 0;
        if (ms >= 0) ms = timed(inputs);
        if (ms < 0) {
          BatchCalibration failed;
          failed.note = "not calibrated: the model failed on " + std::to_string(batch) + " x " +
                        std::to_string(length) + " tokens: " + failure;
          return failed;
        }
        if (round == 0) {
          c.length_points.push_back({batch, length, ms});
        } else {
          c.length_points[k].ms = std::min(c.length_points[k].ms, ms);
        }
        ++k;
      }
    }
  }
  c.length_cost = FitLengthCost(c.length_points);
  c.activation = Measure(batches.back(), lengths.back(),
                         OnesInputs(config, batches.back(), lengths.back()));
  c.by_length = true;
  c.seconds = elapsed_s();
  c.note = "batches cut by length: " + c.length_cost.ToString() + ", fitted to " +
           std::to_string(c.length_points.size()) + " measured shapes (batch sizes not calibrated)";
  return c;
}

}  // namespace inferd::scheduler
