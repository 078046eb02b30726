#include "backend/registry.h"

#include <algorithm>
#include <map>

namespace inferd::backend {
namespace {

struct Entry {
  Capabilities capabilities;
  BackendFactory factory;
};

// A function-local static: registrations run from other translation units'
// static initialisers, whose order is unspecified.
std::map<std::string, Entry>& Entries() {
  static auto* entries = new std::map<std::string, Entry>();
  return *entries;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

bool Registry::Register(const std::string& name, Capabilities capabilities,
                        BackendFactory factory) {
  return Entries().emplace(name, Entry{std::move(capabilities), std::move(factory)}).second;
}

StatusOr<std::unique_ptr<Backend>> Registry::Create(const std::string& name,
                                                    const CreateOptions& options) {
  auto it = Entries().find(name);
  if (it == Entries().end()) {
    return NotFound("backend '" + name +
                    "' is not built into this binary (it has: " + Join(Names()) + ")");
  }
  return it->second.factory(options);
}

const Capabilities* Registry::Find(const std::string& name) {
  auto it = Entries().find(name);
  return it == Entries().end() ? nullptr : &it->second.capabilities;
}

std::vector<std::string> Registry::Names() {
  std::vector<std::string> names;
  for (const auto& [name, entry] : Entries()) names.push_back(name);
  return names;
}

std::vector<std::string> Registry::ModelFiles(const config::ModelConfig& config) {
  const Capabilities* caps = Find(std::string(config::Name(config.backend)));
  if (caps && !caps->model_files.empty()) return caps->model_files;
  return {"model.pt"};
}

Status Registry::CheckConfig(const config::ModelConfig& config, const std::string& file) {
  const std::string name(config::Name(config.backend));
  const Capabilities* caps = Find(name);
  if (!caps) return Status::Ok();
  const std::string prefix = file + ": ";
  const auto& precisions = caps->precisions;
  if (std::find(precisions.begin(), precisions.end(), config.precision) == precisions.end()) {
    std::string supported;
    for (config::Precision p : precisions) {
      supported += (supported.empty() ? "" : ", ") + std::string(config::Name(p));
    }
    return InvalidArgument(prefix + "precision: the " + name + " backend supports " + supported +
                           ", got '" + std::string(config::Name(config.precision)) + "'");
  }
  if (!caps->variants && config.variants != config::Variants::kAuto) {
    return InvalidArgument(prefix + "variants: the " + name +
                           " backend has no execution variants; expected auto, got '" +
                           std::string(config::Name(config.variants)) + "'");
  }
  if (!caps->batching && config.max_batch_size > 1) {
    return InvalidArgument(prefix + "max_batch_size: the " + name +
                           " backend does not batch; expected 1, got " +
                           std::to_string(config.max_batch_size));
  }
  return Status::Ok();
}

}  // namespace inferd::backend
