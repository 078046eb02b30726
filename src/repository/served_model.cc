#include "repository/served_model.h"

namespace inferd::repository {

ServedModel::ServedModel(Parts parts) : parts_(std::move(parts)) {}

ServedModel::~ServedModel() {
  if (parts_.on_release) parts_.on_release();
}

void ServedModel::Retire() {
  if (retired_.exchange(true)) return;
  parts_.scheduler->RemoveModel(parts_.queue);
}

Status ServedModel::Enqueue(scheduler::InferenceRequest request, scheduler::Completion done) {
  in_flight_->fetch_add(1, std::memory_order_relaxed);
  auto counted = [self = shared_from_this(), in_flight = in_flight_,
                  done = std::move(done)](StatusOr<scheduler::InferenceResponse> result) {
    in_flight->fetch_sub(1, std::memory_order_relaxed);
    done(std::move(result));
  };
  Status st = parts_.scheduler->Enqueue(*parts_.queue, std::move(request), std::move(counted));
  if (!st.ok()) in_flight_->fetch_sub(1, std::memory_order_relaxed);
  return st;
}

size_t ServedModel::QueueDepth() const { return parts_.scheduler->QueueDepth(*parts_.queue); }

}  // namespace inferd::repository
