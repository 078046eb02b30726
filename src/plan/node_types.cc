#include "plan/node_types.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "plan/internal/bins.h"

namespace inferd::plan {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

StatusOr<double> PositiveNumber(std::string_view field, const char* what, std::string_view all) {
  double v = 0;
  auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || p != field.data() + field.size() || !std::isfinite(v) || !(v > 0)) {
    return InvalidArgument("--node-type '" + std::string(all) + "': " + what +
                           " must be a number > 0, got '" + std::string(field) + "'");
  }
  return v;
}

}  // namespace

StatusOr<NodeType> ParseNodeType(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t colon = text.find(':', start);
    fields.push_back(text.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  const std::string shown(text);
  if (fields.size() != 4) {
    return InvalidArgument("--node-type '" + shown +
                           "': expected NAME:CORES:MEMORY:PRICE, e.g. c5-4xl:16:32Gi:0.68");
  }
  NodeType t;
  t.name = std::string(fields[0]);
  if (!ValidName(t.name)) {
    return InvalidArgument("--node-type '" + shown + "': the name '" + t.name +
                           "' must be 1-63 characters of a-z, 0-9 and '-' (it becomes a "
                           "Kubernetes label value)");
  }
  ASSIGN_OR_RETURN(t.cores, PositiveNumber(fields[1], "CORES", text));
  auto memory = ParseByteSize(fields[2]);
  if (!memory.ok() || *memory <= 0) {
    return InvalidArgument("--node-type '" + shown + "': MEMORY must be a size > 0 (64Gi), got '" +
                           std::string(fields[2]) + "'");
  }
  t.memory_bytes = *memory;
  ASSIGN_OR_RETURN(t.price, PositiveNumber(fields[3], "PRICE (per hour)", text));
  return t;
}

Status ValidateNodeTypes(const std::vector<NodeType>& types, double headroom) {
  if (types.empty()) return InvalidArgument("no node type");
  std::set<std::string> names;
  for (const NodeType& t : types) {
    if (!names.insert(t.name).second) {
      return InvalidArgument("--node-type: the name '" + t.name + "' is given twice");
    }
    if (!(t.price > 0) || !std::isfinite(t.price)) {
      return InvalidArgument("--node-type " + t.name + ": the price must be > 0");
    }
    Status s = ValidateNodeShape(t.Shape(headroom));
    if (!s.ok()) return InvalidArgument("--node-type " + t.name + ": " + s.message());
  }
  return Status::Ok();
}

CostBound ComputeCostBound(const std::vector<PackItem>& items, const std::vector<NodeType>& types,
                           double headroom) {
  CostBound b;
  for (const PackItem& it : items) {
    b.core_total += it.cores;
    b.memory_total += static_cast<double>(it.memory_bytes);
  }
  const size_t n = types.size();
  b.nodes.assign(n, 0);
  if (items.empty() || n == 0) return b;
  std::vector<double> c(n), m(n);
  for (size_t t = 0; t < n; ++t) {
    const NodeShape shape = types[t].Shape(headroom);
    c[t] = shape.usable_cores();
    m[t] = static_cast<double>(shape.usable_memory());
  }
  const double C = b.core_total, M = b.memory_total;
  b.cost = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < n; ++t) {
    const double nodes = std::max(C / c[t], M / m[t]);
    if (types[t].price * nodes < b.cost) {
      b.cost = types[t].price * nodes;
      b.nodes.assign(n, 0);
      b.nodes[t] = nodes;
    }
  }
  // Both constraints tight: c_s x + c_t y = C, m_s x + m_t y = M.
  for (size_t s = 0; s < n; ++s) {
    for (size_t t = s + 1; t < n; ++t) {
      const double det = c[s] * m[t] - c[t] * m[s];
      if (std::abs(det) < 1e-12 * c[s] * m[t]) continue;  // parallel: a single type covers it
      const double x = (C * m[t] - c[t] * M) / det;
      const double y = (c[s] * M - C * m[s]) / det;
      if (x < 0 || y < 0) continue;
      const double cost = types[s].price * x + types[t].price * y;
      if (cost < b.cost) {
        b.cost = cost;
        b.nodes.assign(n, 0);
        b.nodes[s] = x;
        b.nodes[t] = y;
      }
    }
  }
  return b;
}

int CheapestTypeFor(const std::vector<NodeType>& types, double headroom, double cores,
                    int64_t memory) {
  int best = -1;
  for (size_t t = 0; t < types.size(); ++t) {
    const NodeShape shape = types[t].Shape(headroom);
    if (cores > shape.usable_cores() * (1 + internal::kCoreTolerance) ||
        memory > shape.usable_memory()) {
      continue;
    }
    if (best < 0 || types[t].price < types[best].price) best = static_cast<int>(t);
  }
  return best;
}

}  // namespace inferd::plan
