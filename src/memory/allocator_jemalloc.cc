// INFERD_ALLOCATOR=jemalloc: libjemalloc is linked into the binary and reads
// its settings from the `malloc_conf` symbol below at its first allocation.
#include <jemalloc/jemalloc.h>

#include <string>

#include "memory/allocator.h"

// Read by jemalloc before main(). Defaults purge dirty pages after 10 s and
// serve allocations above 8 MiB from an arena that returns them at once
// (oversize_threshold), which is what made batch 8 fault on every forward.
// Here freed pages are kept for reuse and large blocks share the normal arenas.
// MALLOC_CONF in the environment still overrides these (jemalloc reads it later).
extern "C" {
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1,oversize_threshold:0";
}

namespace inferd::memory {

void ConfigureAllocator() {}

std::string_view AllocatorName() { return "jemalloc"; }

void ReleaseFreeMemory() {
  // The calling thread's cache first, then "arena.<MALLCTL_ARENAS_ALL>.purge":
  // every arena's unused dirty pages.
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  const std::string purge = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0);
}

}  // namespace inferd::memory
