// Registry: the backends linked into this binary, by the name a model's
// `backend:` key spells (config::Name(config::BackendKind)), each with what it
// supports of the config's options.
//
// A backend registers itself from its own .cc at static initialisation:
//
//   extern "C" const bool inferd_backend_xgboost_registered =
//       Registry::Register("xgboost", capabilities, factory);
//
// and its CMake target makes every binary that links it keep that object
// (`-Wl,--undefined=inferd_backend_<name>_registered`), so nothing outside
// src/backend/<name>/ includes a backend's headers: the server creates
// backends by name (Create, or BackendSet for all of them).
//
// Thread-safety: Register runs before main; the lookups are read-only after
// that and safe from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"

namespace inferd::backend {

// What a backend does with the config's options; CheckConfig refuses a config
// that asks for more, naming the file and the key.
struct Capabilities {
  // The model file in <version>/, in the order looked for (docs/CONFIG.md).
  std::vector<std::string> model_files;
  std::vector<config::Precision> precisions = {config::Precision::kFp32};
  bool variants = false;  // honours `variants:` other than auto
  bool batching = true;   // max_batch_size > 1
};

// Options every backend's Create takes.
struct CreateOptions {
  // Runs each model at load on generated inputs so that the first request
  // does not pay one-time costs (the torch backend's graph optimisation).
  bool warm_up = true;
  // Models may run a lone request on every core (Backend::SetCallWidth);
  // false: they hold nothing for it (ONNX Runtime's second session).
  bool wide_calls = true;
};

using BackendFactory = std::function<StatusOr<std::unique_ptr<Backend>>(const CreateOptions&)>;

class Registry {
 public:
  // Adds a backend under `name`; false (and nothing added) when the name is
  // taken. Called from static initialisers.
  static bool Register(const std::string& name, Capabilities capabilities, BackendFactory factory);

  // A new instance of the backend registered under `name`; kNotFound naming
  // the registered ones when there is none.
  static StatusOr<std::unique_ptr<Backend>> Create(const std::string& name,
                                                   const CreateOptions& options = {});

  // Null when `name` is not registered.
  static const Capabilities* Find(const std::string& name);
  // Registered names, sorted.
  static std::vector<std::string> Names();
  // The model file names a version folder may hold for this config's backend,
  // in the order looked for; {"model.pt"} when the backend is not registered.
  static std::vector<std::string> ModelFiles(const config::ModelConfig& config);

  // kInvalidArgument "<file>: <key>: ..." when the config's backend is
  // registered and does not support what the config asks (precision,
  // variants, batching). A backend that is not registered is left to
  // BackendSet::Load, which says it is not built into this binary.
  static Status CheckConfig(const config::ModelConfig& config, const std::string& file);
};

}  // namespace inferd::backend
