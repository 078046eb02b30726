// The archives registered through the management API (POST /models?url=x.mar
// with TorchServe's model_name, batch_size, ...): which archive of the store
// a model name serves, and with what settings. Archives the store holds as
// NAME.mar need no registration.
// Thread-safety: process-wide, guarded by one mutex; any thread.
#pragma once

#include <optional>
#include <string>

#include "archive/mar_manifest.h"

namespace inferd::archive {

struct RegisteredArchive {
  std::string mar_file;  // a file name in the model store
  ServingSettings settings;
};

// Adds or replaces `name`'s registration.
void RegisterArchive(const std::string& name, RegisteredArchive archive);
std::optional<RegisteredArchive> FindRegisteredArchive(const std::string& name);

}  // namespace inferd::archive
