#include "plan/replica_split.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace inferd::plan {
namespace {

// Tolerance for sums of fractional cores: a model needing exactly the usable
// cores must not be split because of rounding.
constexpr double kCoreEpsilon = 1e-9;

}  // namespace

int64_t NodeShape::usable_memory() const {
  return static_cast<int64_t>(std::floor(static_cast<double>(memory_bytes) * (1.0 - headroom)));
}

Status ValidateNodeShape(const NodeShape& shape) {
  if (!(shape.cores > 0) || !std::isfinite(shape.cores)) {
    return InvalidArgument("--node-cores must be a number > 0");
  }
  if (shape.memory_bytes <= 0) return InvalidArgument("--node-memory must be > 0");
  if (!(shape.headroom >= 0 && shape.headroom < 1)) {
    return InvalidArgument(
        "--headroom must be in [0, 1), e.g. 0.2 to leave a fifth of each node free");
  }
  return Status::Ok();
}

StatusOr<std::vector<PackItem>> SplitIntoReplicas(const std::vector<ModelDemand>& models,
                                                  const NodeShape& shape, const std::string& file) {
  return SplitIntoReplicas(models, std::vector<NodeShape>{shape}, file);
}

StatusOr<std::vector<PackItem>> SplitIntoReplicas(const std::vector<ModelDemand>& models,
                                                  const std::vector<NodeShape>& shapes,
                                                  const std::string& file, double replica_share) {
  int64_t largest_memory = 0;
  for (const NodeShape& s : shapes) largest_memory = std::max(largest_memory, s.usable_memory());
  std::vector<PackItem> items;
  items.reserve(models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    const ModelDemand& m = models[i];
    const std::string where = file + ":" + std::to_string(m.line) + ": model '" + m.name + "': ";
    // Replicas are sized for the most cores of any shape that holds the model's memory.
    double usable_cores = 0;
    for (const NodeShape& s : shapes) {
      if (m.memory_bytes <= s.usable_memory())
        usable_cores = std::max(usable_cores, s.usable_cores());
    }
    if (usable_cores <= 0 && shapes.size() == 1) {
      const NodeShape& shape = shapes[0];
      return InvalidArgument(where + "fits on no node even alone: one copy needs " +
                             FormatBytesShort(m.memory_bytes) + ", a node has " +
                             FormatBytesShort(shape.usable_memory()) + " usable (" +
                             FormatBytesShort(shape.memory_bytes) + " less headroom " +
                             std::to_string(shape.headroom) + ")");
    }
    if (usable_cores <= 0) {
      return InvalidArgument(where + "fits on no node type even alone: one copy needs " +
                             FormatBytesShort(m.memory_bytes) + ", the largest type has " +
                             FormatBytesShort(largest_memory) + " usable");
    }
    usable_cores *= replica_share;
    const double need = m.cores();
    if (!std::isfinite(need))
      return InvalidArgument(where + "rps * core_ms is not a finite number");
    const int replicas =
        need <= usable_cores * (1 + kCoreEpsilon)
            ? 1
            : std::max(2, static_cast<int>(std::ceil(need / usable_cores * (1 - kCoreEpsilon))));
    if (replicas > 1000000) {
      return InvalidArgument(where + "needs " + std::to_string(need) +
                             " cores: over a million nodes");
    }
    for (int r = 0; r < replicas; ++r) {
      PackItem it;
      it.model = static_cast<int>(i);
      it.replica = r;
      it.replicas = replicas;
      it.rps = m.rps / replicas;
      it.cores = need / replicas;
      it.memory_bytes = m.memory_bytes;
      items.push_back(it);
    }
  }
  return items;
}

LowerBound ComputeLowerBound(const std::vector<PackItem>& items, const NodeShape& shape) {
  double cores = 0;
  double memory = 0;
  for (const PackItem& it : items) {
    cores += it.cores;
    memory += static_cast<double>(it.memory_bytes);
  }
  LowerBound lb;
  lb.core_nodes = cores / shape.usable_cores();
  lb.memory_nodes = memory / static_cast<double>(shape.usable_memory());
  // A sum that lands a hair over a whole number through rounding must not add a node.
  auto up = [](double x) { return static_cast<int>(std::ceil(x - 1e-9)); };
  lb.nodes = std::max({up(lb.core_nodes), up(lb.memory_nodes), items.empty() ? 0 : 1});
  return lb;
}

}  // namespace inferd::plan
