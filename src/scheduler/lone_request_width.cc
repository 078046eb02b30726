#include "scheduler/lone_request_width.h"

namespace inferd::scheduler {

std::vector<int> ExecutorsToLend(const LoneRequestInput& in) {
  std::vector<int> lent;
  if (!in.enabled || !in.model_runs_wide || in.batch_requests != 1 ||
      in.previous_batch_requests != 1 || in.anything_queued) {
    return lent;
  }
  for (size_t i = 0; i < in.executors.size(); ++i) {
    if (static_cast<int>(i) != in.self && in.executors[i] == ExecutorState::kIdle) {
      lent.push_back(static_cast<int>(i));
    }
  }
  return lent;
}

ExecutorSpec WidenedExecutor(const std::vector<ExecutorSpec>& executors, int self,
                             const std::vector<int>& lent) {
  ExecutorSpec wide = executors[static_cast<size_t>(self)];
  for (int id : lent) {
    const ExecutorSpec& e = executors[static_cast<size_t>(id)];
    wide.cores.insert(wide.cores.end(), e.cores.begin(), e.cores.end());
    wide.num_threads += e.num_threads;
  }
  if (!wide.cores.empty()) wide.num_threads = static_cast<int>(wide.cores.size());
  return wide;
}

}  // namespace inferd::scheduler
