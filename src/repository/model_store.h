// ModelStore: what the model store on disk holds, read without side effects.
//
// Layout: DIR/<model>/config.yaml and DIR/<model>/<version>/<model file>, versions
// positive integers; the model file is the one the config's backend reads
// (model.pt, model.onnx, model.json or model.ubj: backend::Capabilities). A
// config that asks its backend for what it does not support is invalid
// (backend::Registry::CheckConfig). Names are checked by ValidateModelName before any path is
// built from them. Every file-system call uses the error_code overloads: a
// name too long for the file system, a folder that vanished, or an unreadable
// entry comes back as a Status, never as an exception.
// Thread-safety: const and stateless apart from the store path; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/model_config.h"

namespace inferd::repository {

struct StoredVersion {
  int64_t version = 0;
  std::string model_path;  // DIR/<model>/<version>/<model file>
  int64_t file_bytes = 0;  // size of the model file
};

struct StoredModel {
  std::string name;
  std::string dir;                            // DIR/<model>
  std::optional<config::ModelConfig> config;  // absent when config.yaml is invalid
  std::string config_error;                   // why, when absent
  std::vector<StoredVersion> versions;        // ascending
};

class ModelStore {
 public:
  explicit ModelStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  // kNotFound when DIR is not a readable directory.
  Status Check() const;

  // Names of the folders holding a config.yaml, sorted. Folders whose names
  // fail ValidateModelName are left out and described in *skipped.
  std::vector<std::string> ListModels(std::vector<std::string>* skipped = nullptr) const;

  // One model: its config (or the config's error) and versions. kInvalidArgument
  // for a bad name, kNotFound when DIR/<name>/config.yaml does not exist.
  StatusOr<StoredModel> Read(const std::string& name) const;

 private:
  std::string dir_;
};

}  // namespace inferd::repository
