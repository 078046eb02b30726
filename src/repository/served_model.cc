#include "repository/served_model.h"

namespace inferd::repository {

ServedModel::ServedModel(Parts parts) : parts_(std::move(parts)) {}

ServedModel::~ServedModel() {
  if (parts_.on_release) parts_.on_release();
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

Status ServedModel::Enqueue(scheduler::InferenceRequest request, scheduler::Completion done) {
  auto counted = [token = std::make_shared<InFlight>(shared_from_this()), done = std::move(done)](
                     StatusOr<scheduler::InferenceResponse> result) { done(std::move(result)); };
  return parts_.scheduler->Enqueue(*parts_.queue, std::move(request), std::move(counted));
}

size_t ServedModel::QueueDepth() const { return parts_.scheduler->QueueDepth(*parts_.queue); }

}  // namespace inferd::repository
