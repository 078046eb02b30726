#include "scheduler/model_queue.h"

#include <algorithm>
#include <cassert>

namespace inferd::scheduler {

QueueSpec QueueSpecOf(std::string name, const config::ModelConfig& config, bool preprocess) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.max_batch_size = config.max_batch_size;
  spec.max_queue_size = config.max_queue_size;
  spec.max_queue_delay_us = config.dynamic_batching.max_queue_delay_us;
  spec.preferred_batch_sizes = config.dynamic_batching.preferred_batch_sizes;
  for (const config::TensorSpec& input : config.inputs) {
    spec.pads.push_back(input.pad_value.has_value());
  }
  spec.preprocess = preprocess;
  spec.weight = config.weight;
  spec.max_execution_ms = config.max_execution_ms;
  return spec;
}

ModelQueue::ModelQueue(QueueSpec spec, Mutex* mu)
    : mu_(mu), spec_(std::move(spec)), preferred_(spec_.preferred_batch_sizes) {}

void ModelQueue::AssertLockedBy([[maybe_unused]] Mutex* held) const { assert(held == mu_); }

namespace {

// Orders priority levels: 1 < default (0) < 2 < 3 ...
int LevelKey(int priority) { return priority == 0 ? 3 : 2 * priority; }

// OverdueAfter: a forward is overdue past 8x its measured time, and never
// before 50 ms more than it (a tiny model's forward varies by more than 8x
// with the machine's load; 50 ms is what a neighbour may wait for it).
constexpr double kOverdueFactor = 8;
constexpr double kOverdueMarginMs = 50;

}  // namespace

Status ModelQueue::CheckRoom() const {
  if (static_cast<int>(size_) >= spec_.max_queue_size) {
    return ResourceExhausted("model '" + spec_.name + "' is overloaded: its queue holds " +
                             std::to_string(size_) + " requests (max_queue_size); retry later");
  }
  return Status::Ok();
}

Status ModelQueue::Push(QueuedRequest entry) {
  RETURN_IF_ERROR(CheckRoom());
  entry.seq = next_seq_++;
  queued_items_ += entry.items;
  if (entry.request.priority != kSparePriority) {
    last_arrival_ = std::max(last_arrival_, entry.request.enqueue_time);
  }
  levels_[LevelKey(entry.request.priority)].push_back(std::move(entry));
  ++size_;
  return Status::Ok();
}

void ModelQueue::TakeExpired(TimePoint now, std::vector<QueuedRequest>* expired,
                             std::vector<QueuedRequest>* cancelled) {
  for (auto& [level, q] : levels_) {
    for (auto it = q.begin(); it != q.end();) {
      const bool is_expired = it->request.deadline <= now;
      const bool is_cancelled = !is_expired && it->request.is_cancelled && it->request.is_cancelled();
      if (is_expired || is_cancelled) {
        queued_items_ -= it->items;
        (is_expired ? expired : cancelled)->push_back(std::move(*it));
        it = q.erase(it);
        --size_;
      } else {
        ++it;
      }
    }
  }
}

bool ModelQueue::HeadIsSpare() const {
  const QueuedRequest* head = Head();
  return head && head->request.priority == kSparePriority;
}

int ModelQueue::SpareQueued() const {
  auto it = levels_.find(LevelKey(kSparePriority));
  return it == levels_.end() ? 0 : static_cast<int>(it->second.size());
}

const QueuedRequest* ModelQueue::Head() const {
  for (const auto& [level, q] : levels_) {
    if (!q.empty()) return &q.front();
  }
  return nullptr;
}

std::optional<std::pair<int, TimePoint>> ModelQueue::HeadKey() const {
  for (const auto& [level, q] : levels_) {
    if (!q.empty()) return std::make_pair(level, q.front().request.enqueue_time);
  }
  return std::nullopt;
}

Contender ModelQueue::AsContender() const {
  Contender c;
  for (const auto& [level, q] : levels_) {
    if (q.empty()) continue;
    c.level = level;
    c.head_arrival = q.front().request.enqueue_time;
    break;
  }
  c.start = virtual_start_;
  c.cost_s = cost_s_;
  c.weight = spec_.weight;
  return c;
}

void ModelQueue::Reenter(double v) { virtual_start_ = FairShare::Reenter(virtual_start_, v); }

void ModelQueue::Charge(double seconds) {
  virtual_start_ = FairShare::Charge(virtual_start_, seconds, spec_.weight);
  cost_s_ = FairShare::UpdateCost(cost_s_, seconds);
  slowest_s_ = std::max(slowest_s_, seconds);
}

void ModelQueue::ChargeShare(double seconds) {
  virtual_start_ = FairShare::Charge(virtual_start_, seconds, spec_.weight);
}

Duration ModelQueue::OverdueAfter() const {
  double expected_ms = 0;
  if (measured_) expected_ms = std::max(measured_->slowest_ms, measured_->batch1_s * 1000);
  expected_ms = std::max(expected_ms, timed_forward_ms_);
  if (expected_ms <= 0) expected_ms = slowest_s_ * 1000;
  if (expected_ms <= 0) return Duration::max();
  const double ms = std::max(kOverdueFactor * expected_ms, expected_ms + kOverdueMarginMs);
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(ms));
}

Duration ModelQueue::ExecutionLimit() const {
  using std::chrono::milliseconds;
  if (spec_.max_execution_ms > 0) return milliseconds(spec_.max_execution_ms);
  double slowest_ms = slowest_s_ * 1000;
  if (measured_) slowest_ms = std::max(slowest_ms, measured_->slowest_ms);
  slowest_ms = std::max(slowest_ms, timed_forward_ms_);
  const double floor_ms = measured_ || timed_forward_ms_ > 0 ? 10'000 : 60'000;
  return milliseconds(static_cast<int64_t>(std::max(20 * slowest_ms, floor_ms)));
}

TimePoint ModelQueue::EarliestDeadline() const {
  TimePoint earliest = TimePoint::max();
  for (const auto& [level, q] : levels_) {
    for (const auto& e : q) earliest = std::min(earliest, e.request.deadline);
  }
  return earliest;
}

bool ModelQueue::Compatible(const InferenceRequest& head, const InferenceRequest& other) const {
  if (head.raw.empty() != other.raw.empty()) return false;
  if (!head.raw.empty()) return true;  // preprocessing makes equal shapes per model
  for (size_t i = 0; i < head.inputs.size(); ++i) {
    const Shape& a = head.inputs[i].tensor.shape();
    const Shape& b = other.inputs[i].tensor.shape();
    if (std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end())) continue;
    if (i >= spec_.pads.size() || !spec_.pads[i]) return false;
  }
  return true;
}

int ModelQueue::CompatibleItems(std::vector<std::pair<int, size_t>>* picks, int limit) const {
  const InferenceRequest* head = nullptr;
  int items = 0;
  for (const auto& [level, q] : levels_) {
    for (size_t i = 0; i < q.size(); ++i) {
      if (!head) head = &q[i].request;
      if (items + q[i].items > limit) return items;
      if (!Compatible(*head, q[i].request)) continue;
      items += q[i].items;
      if (picks) picks->emplace_back(level, i);
    }
  }
  return items;
}

void ModelQueue::SetMeasuredSizes(std::optional<MeasuredSizes> measured) {
  measured_ = std::move(measured);
  if (!measured_) return;
  // Until batches are measured, the next one costs what batch 1 did.
  if (cost_s_ <= 0 && measured_->batch1_s > 0) cost_s_ = measured_->batch1_s;
  preferred_.clear();
  for (int b : measured_->sizes) {
    if (b > 1) preferred_.push_back(b);
  }
}

int ModelQueue::max_items() const {
  return measured_ ? measured_->max_batch : spec_.max_batch_size;
}

std::optional<TimePoint> ModelQueue::ReadyTime(bool executors_idle) const {
  auto head = HeadKey();
  if (!head) return std::nullopt;
  const int max_items = this->max_items();
  if (max_items <= 1 || spec_.max_queue_delay_us <= 0 || executors_idle) return head->second;
  // Pre-processing is the batching window: arrivals join while it runs.
  if (spec_.preprocess && !Head()->request.raw.empty()) return head->second;
  const int items = CompatibleItems(nullptr, max_items);
  int largest_preferred = 0;
  for (int p : preferred_) largest_preferred = std::max(largest_preferred, p);
  if (items >= max_items || (largest_preferred > 0 && items >= largest_preferred)) {
    return head->second;
  }
  return head->second + std::chrono::microseconds(spec_.max_queue_delay_us);
}

void ModelQueue::set_executors(int total) {
  int n = spec_.executor_ids.empty() ? total : static_cast<int>(spec_.executor_ids.size());
  if (spec_.max_concurrency > 0) n = std::min(n, spec_.max_concurrency);
  executors_ = std::max(n, 1);
}

int ModelQueue::ShareCap() const {
  const int share = (queued_items_ + running_items_ + executors_ - 1) / executors_;
  return std::clamp(share, 1, std::max(1, max_items()));
}

double ModelQueue::Batch1Seconds() const {
  return measured_ && measured_->batch1_s > 0 ? measured_->batch1_s : cost_s_;
}

Batch ModelQueue::TakeBatch(TimePoint now, int share_with, int cap) {
  Batch batch;
  int limit = ShareCap();
  if (cap > 0) limit = std::min(limit, cap);
  auto head = HeadKey();
  if (!head) return batch;
  // Before the delay has passed a batch is ready only because it reached a
  // preferred size: take exactly the largest preferred size that is available.
  const bool delay_passed =
      head->second + std::chrono::microseconds(spec_.max_queue_delay_us) <= now;
  if (!delay_passed && !preferred_.empty()) {
    const int available = CompatibleItems(nullptr, limit);
    int best = 0;
    for (int p : preferred_) {
      if (p <= available) best = std::max(best, p);
    }
    if (best > 0) limit = best;
  }
  if (share_with > 1) {
    const int available = CompatibleItems(nullptr, limit);
    limit = std::max(1, std::min(limit, (available + share_with - 1) / share_with));
  }
  std::vector<std::pair<int, size_t>> picks;
  CompatibleItems(&picks, limit);
  if (picks.empty()) {
    // The head alone carries more items than the preferred size: never stall
    // the queue, run the head by itself.
    for (const auto& [level, q] : levels_) {
      if (!q.empty()) {
        picks.emplace_back(level, 0);
        break;
      }
    }
  }
  // Erase from the back so earlier indices stay valid.
  std::vector<QueuedRequest> taken;
  for (auto it = picks.rbegin(); it != picks.rend(); ++it) {
    auto& q = levels_[it->first];
    queued_items_ -= q[it->second].items;
    taken.push_back(std::move(q[it->second]));
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(it->second));
    --size_;
  }
  std::reverse(taken.begin(), taken.end());
  for (auto& t : taken) {
    batch.items += t.items;
    batch.requests.push_back(std::move(t));
  }
  DropEmptyLevels();
  return batch;
}

std::vector<QueuedRequest> ModelQueue::TakeMore(int max_items, TimePoint now) {
  std::vector<QueuedRequest> taken;
  int items = 0;
  bool full = false;
  for (auto& [level, q] : levels_) {
    for (auto it = q.begin(); it != q.end() && !full;) {
      if (items + it->items > max_items || it->request.deadline <= now) {
        full = true;
      } else if (it->request.raw.empty()) {
        ++it;
      } else {
        items += it->items;
        queued_items_ -= it->items;
        taken.push_back(std::move(*it));
        it = q.erase(it);
        --size_;
      }
    }
    if (full) break;
  }
  DropEmptyLevels();
  return taken;
}

void ModelQueue::GiveBack(std::vector<QueuedRequest> requests) {
  for (QueuedRequest& r : requests) {
    auto& q = levels_[LevelKey(r.request.priority)];
    auto place = std::find_if(q.begin(), q.end(),
                              [&](const QueuedRequest& other) { return other.seq > r.seq; });
    running_items_ -= r.items;
    queued_items_ += r.items;
    r.joined = TimePoint{};
    q.insert(place, std::move(r));
    ++size_;
  }
}

void ModelQueue::DropEmptyLevels() {
  for (auto it = levels_.begin(); it != levels_.end();) {
    it = it->second.empty() ? levels_.erase(it) : std::next(it);
  }
}

std::vector<QueuedRequest> ModelQueue::TakeAll() {
  std::vector<QueuedRequest> all;
  for (auto& [level, q] : levels_) {
    for (auto& e : q) all.push_back(std::move(e));
  }
  levels_.clear();
  size_ = 0;
  queued_items_ = 0;
  return all;
}

bool ModelQueue::CanStartOn(int executor_id) const {
  if (spec_.max_concurrency > 0 && running_ >= spec_.max_concurrency) return false;
  if (spec_.executor_ids.empty()) return true;
  return std::find(spec_.executor_ids.begin(), spec_.executor_ids.end(), executor_id) !=
         spec_.executor_ids.end();
}

}  // namespace inferd::scheduler
