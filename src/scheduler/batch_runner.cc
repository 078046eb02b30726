#include "scheduler/batch_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>

#include "scheduler/batch.h"
#include "scheduler/batch_assembly.h"
#include "scheduler/internal/describe_exception.h"

namespace inferd::scheduler {

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
                  internal::DescribeException(std::current_exception()));
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
    const std::string what = internal::DescribeException(std::current_exception());
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
          const std::string what = internal::DescribeException(std::current_exception());
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
    RunAdmitted(requests, pending, live, start, batch_rows, give_back, stage);
    return;
  }
  for (const std::vector<size_t>& group : KeepOrGiveBack(requests, pending, live, give_back)) {
    RunAdmitted(requests, pending, group, start, nullptr, give_back, stage);
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
    lengths.push_back(LengthOf(requests[i]));
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

void BatchRunner::RunAdmitted(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                              const std::vector<size_t>& group, TimePoint start,
                              const Tensor* rows, const GiveBack& give_back, const char** stage) {
  MemoryAdmission* admission = options_.admission.get();
  const ActivationMemory a = admission ? activation() : ActivationMemory{};
  if (!a.measured()) {
    RunGroup(requests, pending, group, start, rows, 0, stage);
    return;
  }
  // Releases a batch's reservation however RunGroup ends.
  struct Reservation {
    MemoryAdmission* admission;
    int64_t bytes;
    ~Reservation() { admission->Release(bytes); }
  };
  const Metrics& metrics = options_.metrics;
  std::vector<size_t> rest = group;
  int64_t first_row = 0;
  while (!rest.empty()) {
    *stage = "memory admission";
    const AdmissionDecision d = admission->Decide(PrefixNeeds(requests, rest, a));
    if (d.refuse) {
      const QueuedRequest& first = requests[rest.front()];
      const int64_t tokens = length_input_ >= 0 && a.bytes_per_token > 0
                                 ? first.items * LengthOf(first)
                                 : 0;
      Status refused = admission->Refusal("model '" + options_.name + "'", d, first.items, tokens);
      spdlog::warn("{}", refused.message());
      if (metrics.admission_refused) metrics.admission_refused->Increment();
      Answer(requests[rest.front()], &pending[rest.front()].answered, std::move(refused));
      first_row += first.items;
      rest.erase(rest.begin());
      continue;
    }
    std::vector<size_t> now(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(d.run));
    std::vector<size_t> later(rest.begin() + static_cast<std::ptrdiff_t>(d.run), rest.end());
    if (!later.empty()) {
      if (metrics.admission_cut) metrics.admission_cut->Increment();
      spdlog::debug("model '{}': memory admission runs {} of {} requests ({} bytes needed)",
                    options_.name, now.size(), rest.size(), d.needed);
      if (!rows && give_back) {
        std::vector<QueuedRequest> back;
        back.reserve(later.size());
        for (size_t i : later) back.push_back(std::move(requests[i]));
        if (give_back(back)) {
          for (size_t i : later) pending[i].answered = true;
          later.clear();
        } else {
          for (size_t k = 0; k < later.size(); ++k) requests[later[k]] = std::move(back[k]);
        }
      }
    }
    {
      Reservation reserved{admission, d.needed};
      RunGroup(requests, pending, now, start, rows, first_row, stage);
    }
    for (size_t i : now) first_row += requests[i].items;
    rest = std::move(later);
  }
}

void BatchRunner::RunGroup(std::vector<QueuedRequest>& requests, std::vector<Pending>& pending,
                           const std::vector<size_t>& live, TimePoint start, const Tensor* rows,
                           int64_t first_row, const char** stage) {
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
    assembled = BatchOfRows(options_.config, *rows, std::move(live_items), first_row);
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
  const Metrics& metrics = options_.metrics;
  if (length_input_ >= 0 && metrics.padded_tokens && metrics.real_tokens) {
    const auto input = static_cast<size_t>(length_input_);
    const Shape& batched = assembled->inputs[input].tensor.shape();
    int64_t real = 0;
    for (const auto& own : assembled->own_shapes) real += NumElements(own[input]);
    metrics.padded_tokens->Increment(static_cast<double>(NumElements(batched) - real));
    metrics.real_tokens->Increment(static_cast<double>(real));
  }
  if (metrics.batch_sizes) metrics.batch_sizes->Observe(static_cast<double>(batch_items));

  *stage = "the model's forward()";
  const TimePoint compute_start = clock.Now();
  auto outputs = [&] {
    journal::ForwardScope running(options_.forward_mark);  // the crash journal's mark
    return options_.model->Execute(assembled->inputs);
  }();
  const TimePoint compute_end = clock.Now();
  if (metrics.worker_resident_bytes) {
    metrics.worker_resident_bytes->Set(static_cast<double>(options_.model->WorkerResidentBytes()));
  }
  if (!outputs.ok()) {
    Status st = outputs.status().WithContext(model);
    for (size_t i : live) answer(i, st);
    if (options_.quarantine) {
      if (auto reason = options_.model->QuarantineReason()) options_.quarantine(*reason);
    }
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
        const std::string what = internal::DescribeException(std::current_exception());
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

}  // namespace inferd::scheduler
