#include "scheduler/batch.h"

namespace inferd::scheduler {

size_t SumBytes(const std::vector<QueuedRequest>& requests) {
  size_t bytes = 0;
  for (const auto& r : requests) bytes += r.bytes;
  return bytes;
}

}  // namespace inferd::scheduler
