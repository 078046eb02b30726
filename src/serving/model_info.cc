#include "serving/model_info.h"

namespace inferd::serving {
namespace {

using repository::ModelState;
using repository::ModelStatus;
using repository::VersionStatus;

std::vector<TensorMetadata> Specs(const std::vector<config::TensorSpec>& specs) {
  std::vector<TensorMetadata> out;
  for (const auto& spec : specs) {
    TensorMetadata t{spec.name, spec.dtype, {-1}};
    t.shape.insert(t.shape.end(), spec.dims.begin(), spec.dims.end());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::vector<std::string> ServerExtensions() { return {"binary_tensor_data", "model_repository"}; }

const VersionStatus* FindVersion(const ModelStatus& status, int64_t version) {
  for (const auto& v : status.versions) {
    if (v.version == version) return &v;
  }
  return nullptr;
}

Status UnknownVersion(const ModelStatus& status, int64_t version) {
  std::string known;
  for (const auto& v : status.versions)
    known += (known.empty() ? "" : ", ") + std::to_string(v.version);
  return NotFound("model '" + status.name + "' has no version " + std::to_string(version) +
                  "; versions: " + (known.empty() ? "none" : known));
}

const VersionStatus* DefaultVersion(const ModelStatus& status) {
  const VersionStatus* best = nullptr;
  for (const auto& v : status.versions) {
    if (v.state == ModelState::kReady) best = &v;
  }
  if (!best && !status.versions.empty()) best = &status.versions.back();
  return best;
}

std::vector<IndexEntry> RepositoryIndex(const std::vector<ModelStatus>& models, bool ready_only) {
  std::vector<IndexEntry> out;
  for (const auto& m : models) {
    IndexEntry row;
    row.name = m.name;
    row.load = m.load;
    row.pinned = m.pinned;
    row.last_used = m.last_used;
    if (m.versions.empty() && !ready_only) {
      row.reason = m.error;
      out.push_back(row);
    }
    for (const auto& v : m.versions) {
      if (ready_only && v.state != ModelState::kReady) continue;
      row.version = std::to_string(v.version);
      row.state = v.state;
      row.reason = v.reason.empty() ? v.error : v.reason;
      row.bytes = v.resident ? v.footprint.bytes : 0;
      row.footprint = v.footprint;
      out.push_back(row);
    }
  }
  return out;
}

StatusOr<ModelMetadata> DescribeModel(const ModelStatus& status, std::optional<int64_t> version) {
  const VersionStatus* chosen = nullptr;
  if (version) {
    chosen = FindVersion(status, *version);
    if (!chosen) return UnknownVersion(status, *version);
  }
  ModelMetadata m;
  m.name = status.name;
  for (const auto& v : status.versions) {
    if (!chosen || chosen == &v) m.versions.push_back(v.version);
  }
  if (status.config) {
    m.has_config = true;
    m.max_batch_size = status.config->max_batch_size;
    m.inputs = Specs(status.config->inputs);
    m.outputs = Specs(status.config->outputs);
  }
  const VersionStatus* shown = chosen ? chosen : DefaultVersion(status);
  m.state = shown ? shown->state : ModelState::kUnavailable;
  m.error = shown && !shown->error.empty() ? shown->error : status.error;
  if (shown) m.reason = shown->reason;
  if (shown) m.calibration = shown->calibration;
  if (shown) m.precision = shown->precision;
  if (shown) m.load_skipped = shown->load_skipped;
  if (shown) m.candidates = shown->files;
  return m;
}

}  // namespace inferd::serving
