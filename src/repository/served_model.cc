#include "repository/served_model.h"

namespace inferd::repository {

ServedModel::ServedModel(Parts parts) : parts_(std::move(parts)) {}

ServedModel::~ServedModel() {
  if (parts_.on_release) parts_.on_release();
}

std::string ServedModel::load_skipped() const {
  return parts_.model ? parts_.model->execution_report().skipped : std::string();
}

backend::PrecisionReport ServedModel::precision() const {
  return parts_.model ? parts_.model->execution_report().precision : backend::PrecisionReport{};
}

scheduler::BatchCalibration ServedModel::calibration() const {
  return parts_.scheduler->GetCalibration(*parts_.queue);
}

void ServedModel::Retire() {
  if (retired_.exchange(true)) return;
  if (parts_.memory) {
    scheduler::BatchCalibration c = calibration();
    if (c.calibrated) {
      std::lock_guard<std::mutex> lock(parts_.memory->mu);
      parts_.memory->calibration = std::move(c);
    }
  }
  parts_.scheduler->RemoveModel(parts_.queue);
}

// Rides in a request's completion: holds the version until the completion is
// destroyed (wherever the scheduler does that), then counts the request out
// and tells the repository when it was the version's last.
class ServedModel::InFlight {
 public:
  explicit InFlight(ModelHandle model) : model_(std::move(model)) {
    model_->in_flight_->fetch_add(1, std::memory_order_relaxed);
  }
  ~InFlight() {
    const std::shared_ptr<std::atomic<int>> count = model_->in_flight_;
    const std::function<void()> on_idle = model_->parts_.on_idle;
    model_.reset();  // first, so that the repository sees the version idle
    if (count->fetch_sub(1, std::memory_order_acq_rel) == 1 && on_idle) on_idle();
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  ModelHandle model_;
};

// The completion the scheduler gets: a named type, so that a refused one
// can give the caller's completion back (std::function::target).
struct ServedModel::Counted {
  std::shared_ptr<InFlight> token;
  scheduler::Completion done;
  void operator()(StatusOr<scheduler::InferenceResponse> result) const { done(std::move(result)); }
};

Status ServedModel::EnqueueHere(scheduler::InferenceRequest& request, scheduler::Completion& done) {
  scheduler::Completion counted =
      Counted{std::make_shared<InFlight>(shared_from_this()), std::move(done)};
  Status st = parts_.scheduler->Enqueue(*parts_.queue, std::move(request), std::move(counted));
  // Refused: the scheduler left `counted` to us; take the caller's completion back.
  if (Counted* kept = st.ok() ? nullptr : counted.target<Counted>()) done = std::move(kept->done);
  return st;
}

Status ServedModel::Enqueue(scheduler::InferenceRequest request, scheduler::Completion done) {
  ModelHandle held;  // keeps `at` alive when it is a successor
  ServedModel* at = this;
  for (int hop = 0;; ++hop) {
    Status st = at->EnqueueHere(request, done);
    // retired_ is set before the queue is removed, so a refusal that finds it
    // set may be the retirement's. (One for another reason just before it,
    // draining or held bytes, meets the same checks at the successor.)
    if (st.ok() || st.code() != StatusCode::kUnavailable ||
        !at->retired_.load(std::memory_order_acquire) || !at->parts_.successor ||
        hop == kMaxSuccessorHops) {
      return st;
    }
    ModelHandle next = at->parts_.successor();
    if (!next || next.get() == at) return st;
    held = std::move(next);
    at = held.get();
  }
}

size_t ServedModel::QueueDepth() const { return parts_.scheduler->QueueDepth(*parts_.queue); }

}  // namespace inferd::repository
