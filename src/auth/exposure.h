// The safe default of `inferd serve`: a server reachable from other machines
// must ask for keys. Binding any address other than loopback (127.0.0.0/8,
// ::1) without --auth-keys is refused, unless --allow-unauthenticated says
// the operator means it (a private network, a mesh that authenticates).
// Pure function; any thread.
#pragma once

#include <string>

#include "common/status.h"

namespace inferd::auth {

// OK, or FailedPrecondition naming --auth-keys and --allow-unauthenticated.
Status CheckExposure(const std::string& bind_address, bool have_keys, bool allow_unauthenticated);

}  // namespace inferd::auth
