// ModelFileBytes: the size of a version's model file, or the error a load
// answers when there is none. Shared by the backends' Load.
// A free function; any thread.
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "common/status.h"

namespace inferd::backend {

// kInvalidArgument "model 'm': model file '<path>' does not exist or is not a
// file"; else its size in bytes (0 when the size cannot be read).
StatusOr<int64_t> ModelFileBytes(const LoadOptions& load);

}  // namespace inferd::backend
