#include "scheduler/batch_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>

#include "scheduler/batch_assembly.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {
namespace {

// What an exception in flight says about itself, without throwing again.
std::string Describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

// One request of the batch on its way through the stages; pending[i] is
// requests[i] (an index, not a pointer: top-ups grow `requests`).
struct BatchRunner::Pending {
  bool answered = false;  // or given back to the queue
};

namespace {

void Answer(QueuedRequest& queued, bool* answered, StatusOr<InferenceResponse> result) {
  *answered = true;
  try {
    queued.done(std::move(result));
  } catch (...) {
    // The completion belongs to the front end; a throw there must not
    // answer this request a second time or end the executor.
    spdlog::error("request '{}': its completion threw: {}", queued.request.id,
                  Describe(std::current_exception()));
  }
}

// One item's bytes of the config's single input, when it has fixed dims and a
// fixed-size dtype; else 0.
size_t FixedRowBytes(const config::ModelConfig& config) {
  if (config.inputs.size() != 1 || config.inputs.front().dtype == DataType::kBytes) return 0;
  size_t bytes = DataTypeSize(config.inputs.front().dtype);
  for (int64_t d : config.inputs.front().dims) {
    if (d < 0) return 0;
    bytes *= static_cast<size_t>(d);
  }
  return bytes;
}

}  // namespace

// The batch tensor that pre-processing writes into (preprocess_into): its
// first `used_` rows hold the live requests' items, in order. The first
// Append takes a pooled tensor of at least `min_rows` rows; a batch that
// outgrows it moves, with a copy of the rows in use, to one twice as large.
class BatchRunner::Rows {
 public:
  Rows(const config::TensorSpec& spec, size_t row_bytes, int min_rows, TensorPool* pool)
      : spec_(spec), row_bytes_(row_bytes), min_rows_(min_rows), pool_(pool) {}

  // Lets `write` fill the next `items` rows (it gets their bytes); they are
  // kept only when it succeeds, so a failed request leaves no gap.
  Status Append(int items, const std::function<Status(std::byte*, size_t)>& write) {
    Reserve(used_ + items);
    Status st = write(tensor_.mutable_data() + static_cast<size_t>(used_) * row_bytes_,
                      static_cast<size_t>(items) * row_bytes_);
    if (st.ok()) used_ += items;
    return st;
  }
  const Tensor& tensor() const { return tensor_; }

 private:
  int capacity() const {
    return tensor_.shape().empty() ? 0 : static_cast<int>(tensor_.shape()[0]);
  }
  void Reserve(int rows) {
    if (rows <= capacity()) return;
    Shape shape{std::max({rows, min_rows_, 2 * capacity()})};
    shape.insert(shape.end(), spec_.dims.begin(), spec_.dims.end());
    Tensor grown = pool_->AllocateUninitialized(spec_.dtype, std::move(shape));
    if (used_ > 0) {
      std::memcpy(grown.mutable_data(), tensor_.data(), static_cast<size_t>(used_) * row_bytes_);
    }
    tensor_ = std::move(grown);
  }

  const config::TensorSpec& spec_;
  const size_t row_bytes_;
  const int min_rows_;
  TensorPool* const pool_;
  Tensor tensor_;
  int used_ = 0;
};

namespace {

// The first input of a variable dim with a pad_value (not BYTES), or -1.
int LengthInput(const config::ModelConfig& config) {
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const config::TensorSpec& spec = config.inputs[i];
    if (!spec.pad_value || spec.dtype == DataType::kBytes) continue;
    if (std::find(spec.dims.begin(), spec.dims.end(), -1) != spec.dims.end()) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

BatchRunner::BatchRunner(Options options)
    : options_(std::move(options)),
      row_bytes_(options_.hooks.preprocess_into ? FixedRowBytes(options_.config) : 0),
      length_input_(LengthInput(options_.config)) {}

void BatchRunner::Run(std::vector<QueuedRequest>& requests, TimePoint start, const TopUp& top_up,
                      const GiveBack& give_back) {
  std::vector<Pending> pending;
  const char* stage = "batch set-up";
  try {
    RunStages(requests, pending, start, top_up, give_back, &stage);
    return;
  } catch (...) {
    const std::string what = Describe(std::current_exception());
    spdlog::error("model '{}': {} threw: {}", options_.name, stage, what);
    Status failed = Internal("model '" + options_.name + "': " + stage + " threw: " + what);
    for (size_t i = 0; i < requests.size(); ++i) {
      bool answered = i < pending.size() && pending[i].answered;
      if (!answered) Answer(requests[i], &answered, failed);
    }
  }
}

void BatchRunner::RunStages(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                            TimePoint start, const TopUp& top_up, const GiveBack& give_back,
                            const char** stage) {
  const std::string model = "model '" + options_.name + "'";
  Clock& clock = *options_.clock;
  auto answer = [&](size_t i, StatusOr<InferenceResponse> result) {
    Answer(requests[i], &pending[i].answered, std::move(result));
  };
  // Pre-processing, per request: a request that fails or throws is answered
  // alone; the others go on. After each round, requests that arrived
  // meanwhile may join (top_up), until none does.
  std::vector<size_t> live;
  int items = 0;
  // Into batch rows when every request is raw (top-ups are raw too).
  std::optional<Rows> rows;
  bool into_rows = row_bytes_ > 0;
  for (const QueuedRequest& r : requests) into_rows = into_rows && !r.request.raw.empty();
  if (into_rows) {
    rows.emplace(options_.config.inputs.front(), row_bytes_, options_.config.max_batch_size,
                 &input_pool_);
  }
  for (size_t next = 0;;) {
    *stage = "batch set-up";
    pending.reserve(requests.size());
    for (; next < requests.size(); ++next) {
      pending.emplace_back();
      InferenceRequest& request = requests[next].request;
      if (!request.raw.empty() && options_.hooks.preprocess) {
        const TimePoint t0 = clock.Now();
        Status st;
        try {
          st = rows ? rows->Append(requests[next].items,
                                   [&](std::byte* dst, size_t bytes) {
                                     return options_.hooks.preprocess_into(request, dst, bytes);
                                   })
                    : options_.hooks.preprocess(request);
        } catch (...) {
          const std::string what = Describe(std::current_exception());
          spdlog::error("{}: pre-processing threw: {}", model, what);
          st = Internal(model + ": pre-processing threw: " + what);
        }
        requests[next].preprocess_us = MicrosBetween(t0, clock.Now());
        if (!st.ok()) {
          answer(next, st);
          continue;
        }
      }
      live.push_back(next);
      items += requests[next].items;
    }
    if (!top_up) break;
    *stage = "joining the batch";
    std::vector<QueuedRequest> more = top_up(items);
    if (more.empty()) break;
    requests.reserve(requests.size() + more.size());
    for (auto& m : more) requests.push_back(std::move(m));
  }
  if (live.empty()) return;
  const Tensor* batch_rows = rows ? &rows->tensor() : nullptr;
  if (batch_rows || live.size() == 1 || length_input_ < 0) {
    RunGroup(requests, pending, live, start, batch_rows, stage);
    return;
  }
  for (const std::vector<size_t>& group : KeepOrGiveBack(requests, pending, live, give_back)) {
    RunGroup(requests, pending, group, start, nullptr, stage);
  }
}

std::vector<std::vector<size_t>> BatchRunner::KeepOrGiveBack(std::vector<QueuedRequest>& requests,
                                                             std::vector<Pending>& pending,
                                                             const std::vector<size_t>& live,
                                                             const GiveBack& give_back) const {
  std::vector<std::vector<size_t>> groups = Groups(requests, live);
  // live.front() is the oldest: requests are in queue order, top-ups after.
  auto oldest = std::find_if(groups.begin(), groups.end(), [&](const std::vector<size_t>& g) {
    return std::find(g.begin(), g.end(), live.front()) != g.end();
  });
  std::rotate(groups.begin(), oldest, oldest + 1);
  if (groups.size() == 1 || !give_back) return groups;
  std::vector<size_t> others;
  for (size_t g = 1; g < groups.size(); ++g) {
    others.insert(others.end(), groups[g].begin(), groups[g].end());
  }
  std::sort(others.begin(), others.end());
  std::vector<QueuedRequest> back;
  back.reserve(others.size());
  for (size_t i : others) back.push_back(std::move(requests[i]));
  if (!give_back(back)) {
    for (size_t k = 0; k < others.size(); ++k) requests[others[k]] = std::move(back[k]);
    return groups;
  }
  for (size_t i : others) pending[i].answered = true;
  groups.resize(1);
  return groups;
}

std::vector<std::vector<size_t>> BatchRunner::Groups(const std::vector<QueuedRequest>& requests,
                                                     const std::vector<size_t>& live) const {
  std::vector<int64_t> lengths;
  std::vector<int> items;
  lengths.reserve(live.size());
  items.reserve(live.size());
  for (size_t i : live) {
    const Shape& s = requests[i].request.inputs[static_cast<size_t>(length_input_)].tensor.shape();
    int64_t length = 1;
    for (size_t d = 1; d < s.size(); ++d) length *= s[d];
    lengths.push_back(length);
    items.push_back(requests[i].items);
  }
  std::vector<std::vector<size_t>> groups =
      PlanByLength(lengths, items, length_cost(), std::max(1, options_.config.max_batch_size));
  for (auto& g : groups) {
    for (size_t& k : g) k = live[k];
  }
  return groups;
}

void BatchRunner::set_length_cost(const LengthCost& cost) {
  MutexLock lock(&cost_mu_);
  length_cost_ = cost;
}

LengthCost BatchRunner::length_cost() const {
  MutexLock lock(&cost_mu_);
  return length_cost_;
}

void BatchRunner::RunGroup(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                           const std::vector<size_t>& live, TimePoint start, const Tensor* rows,
                           const char** stage) {
  const std::string model = "model '" + options_.name + "'";
  Clock& clock = *options_.clock;
  auto answer = [&](size_t i, StatusOr<InferenceResponse> result) {
    Answer(requests[i], &pending[i].answered, std::move(result));
  };
  *stage = "batch assembly";
  StatusOr<AssembledBatch> assembled = AssembledBatch{};
  if (rows) {
    std::vector<int> live_items;
    live_items.reserve(live.size());
    for (size_t i : live) live_items.push_back(requests[i].items);
    assembled = BatchOfRows(options_.config, *rows, std::move(live_items));
  } else {
    std::vector<const std::vector<NamedTensor>*> inputs;
    inputs.reserve(live.size());
    for (size_t i : live) inputs.push_back(&requests[i].request.inputs);
    assembled = AssembleBatch(options_.config, inputs, &input_pool_);
  }
  if (!assembled.ok()) {
    for (size_t i : live) answer(i, assembled.status());
    return;
  }
  int batch_items = 0;
  for (int n : assembled->items) batch_items += n;
  if (length_input_ >= 0 && padded_tokens_ && real_tokens_) {
    const auto input = static_cast<size_t>(length_input_);
    const Shape& batched = assembled->inputs[input].tensor.shape();
    int64_t real = 0;
    for (const auto& own : assembled->own_shapes) real += NumElements(own[input]);
    padded_tokens_->Increment(static_cast<double>(NumElements(batched) - real));
    real_tokens_->Increment(static_cast<double>(real));
  }
  if (forward_sizes_) forward_sizes_->Observe(static_cast<double>(batch_items));

  *stage = "the model's forward()";
  const TimePoint compute_start = clock.Now();
  auto outputs = options_.model->Execute(assembled->inputs);
  const TimePoint compute_end = clock.Now();
  if (!outputs.ok()) {
    Status st = outputs.status().WithContext(model);
    for (size_t i : live) answer(i, st);
    return;
  }

  *stage = "splitting the outputs";
  auto split = SplitOutputs(*assembled, *outputs);
  if (!split.ok()) {
    Status st = split.status().WithContext(model);
    for (size_t i : live) answer(i, st);
    return;
  }

  *stage = "post-processing";
  for (size_t k = 0; k < live.size(); ++k) {
    const size_t i = live[k];
    QueuedRequest& queued = requests[i];
    InferenceResponse response;
    response.id = queued.request.id;
    response.outputs = std::move((*split)[k]);
    const TimePoint taken = queued.joined == TimePoint{} ? start : queued.joined;
    response.queue_us = MicrosBetween(queued.request.enqueue_time, taken);
    response.preprocess_us = queued.preprocess_us;
    response.compute_us = MicrosBetween(compute_start, compute_end);
    response.batch_size = batch_items;
    if (options_.hooks.postprocess) {
      Status st;
      try {
        st = options_.hooks.postprocess(response);
      } catch (...) {
        const std::string what = Describe(std::current_exception());
        spdlog::error("{}: post-processing threw: {}", model, what);
        st = Internal(model + ": post-processing threw: " + what);
      }
      if (!st.ok()) {
        answer(i, st);
        continue;
      }
    }
    answer(i, std::move(response));
  }
}

namespace {

// One forward's cost in ms by `timer`, or -1 with `failure` set when the
// model failed or threw.
double TimeForward(backend::Model& model, const CallTimer& timer,
                   const std::vector<NamedTensor>& inputs, std::string* failure) {
  Status status;
  const double ms = timer([&] {
    try {
      status = model.Execute(inputs).status();
    } catch (...) {
      status = Internal(Describe(std::current_exception()));
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

BatchCalibration BatchRunner::Calibrate(const CalibrationOptions& options) const {
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
  const auto wall0 = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  };
  // One call's cost in ms, or a negative value when the model failed.
  std::string failure;
  auto time_call = [&](const std::vector<NamedTensor>& inputs) {
    return TimeForward(*options_.model, options.timer, inputs, &failure);
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
    for (int k = 0; k < 2 && ms >= 0; ++k) ms = time_call(inputs.back());
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
  c.calibrated = true;
  c.seconds = elapsed_s();
  c.note += std::to_string(rounds) + " timed rounds";
  return c;
}

namespace {

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
      case DataType::kFp32: { float v = 1; std::memcpy(one.data(), &v, elem); break; }
      case DataType::kFp64: { double v = 1; std::memcpy(one.data(), &v, elem); break; }
      case DataType::kBf16: { uint16_t v = 0x3f80; std::memcpy(one.data(), &v, elem); break; }
      case DataType::kFp16: { uint16_t v = 0x3c00; std::memcpy(one.data(), &v, elem); break; }
      default: one[0] = std::byte{1}; break;  // integers and BOOL, little-endian
    }
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      std::memcpy(t.mutable_data() + static_cast<size_t>(e) * elem, one.data(), elem);
    }
    inputs.push_back({spec.name, std::move(t)});
  }
  return inputs;
}

}  // namespace

BatchCalibration BatchRunner::CalibrateLengths(const CalibrationOptions& options) const {
  const config::ModelConfig& config = options_.config;
  BatchCalibration c;
  const int64_t longest = config.preprocess.kind == config::PreprocessKind::kText ? config.preprocess.max_length : 128;
  std::vector<int64_t> lengths;
  for (int64_t l : {int64_t{16}, int64_t{64}, longest}) {
    l = std::min(l, longest);
    if (lengths.empty() || l > lengths.back()) lengths.push_back(l);
  }
  std::vector<int> batches = {1};
  if (config.max_batch_size > 1) batches.push_back(std::min(4, config.max_batch_size));
  const auto wall0 = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  };
  // Each shape is warmed by one call (the graph executor profiles it) and
  // timed by the next; later rounds, while the budget lasts, keep the
  // fastest call of each shape.
  std::string failure;
  auto timed = [&](const std::vector<NamedTensor>& inputs) {
    return TimeForward(*options_.model, options.timer, inputs, &failure);
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
  c.by_length = true;
  c.seconds = elapsed_s();
  c.note = "batches cut by length: " + c.length_cost.ToString() + ", fitted to " +
           std::to_string(c.length_points.size()) + " measured shapes (batch sizes not calibrated)";
  return c;
}

}  // namespace inferd::scheduler
