// BatchRunner's figures for memory admission: a request's length, the
// model's measured activation memory, and what each prefix of a group of
// requests would need (memory_admission.h decides from them; RunAdmitted in
// batch_runner.cc acts on the decision).
#include "scheduler/batch_runner.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace inferd::scheduler {

int64_t BatchRunner::LengthOf(const QueuedRequest& queued) const {
  if (length_input_ < 0) return 1;
  const auto input = static_cast<size_t>(length_input_);
  if (input >= queued.request.inputs.size()) return 1;
  const Shape& s = queued.request.inputs[input].tensor.shape();
  int64_t length = 1;
  for (size_t d = 1; d < s.size(); ++d) length *= s[d];
  return length;
}

void BatchRunner::set_activation(const ActivationMemory& activation) {
  MutexLock lock(&cost_mu_);
  activation_ = activation;
}

ActivationMemory BatchRunner::activation() const {
  MutexLock lock(&cost_mu_);
  return activation_;
}

std::vector<int64_t> BatchRunner::PrefixNeeds(const std::vector<QueuedRequest>& requests,
                                              const std::vector<size_t>& group,
                                              const ActivationMemory& a) const {
  std::vector<int64_t> needs;
  needs.reserve(group.size());
  const bool by_token = length_input_ >= 0 && a.bytes_per_token > 0;
  int64_t items = 0, longest = 0;
  for (size_t i : group) {
    items += requests[i].items;
    longest = std::max(longest, LengthOf(requests[i]));
    needs.push_back(by_token ? a.bytes_per_token * items * longest : a.bytes_per_item * items);
  }
  return needs;
}

}  // namespace inferd::scheduler
