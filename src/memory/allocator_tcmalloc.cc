// INFERD_ALLOCATOR=tcmalloc: libtcmalloc_minimal is linked into the binary
// (its malloc/free replace glibc's for the whole process, libtorch included).
#include <gperftools/malloc_extension.h>

#include <cstdlib>
#include <mutex>

#include "memory/allocator.h"

namespace inferd::memory {

void ConfigureAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // tcmalloc returns free spans to the kernel a little at a time as memory
    // is freed (release rate 1 by default); the next forward then faults
    // those pages in again. A server reuses the same sizes on every batch:
    // keep them. ReleaseFreeMemory still returns everything on demand.
    // TCMALLOC_RELEASE_RATE in the environment still wins (for comparisons).
    if (std::getenv("TCMALLOC_RELEASE_RATE") == nullptr) {
      MallocExtension::instance()->SetMemoryReleaseRate(0);
    }
  });
}

std::string_view AllocatorName() { return "tcmalloc"; }

void ReleaseFreeMemory() {
  // The calling thread's cache first (the thread that just freed a model holds
  // megabytes of its small objects there: 8 MiB after unloading 100 models
  // here), so that their spans can go back to the page heap and then to the
  // kernel.
  MallocExtension::instance()->MarkThreadIdle();
  MallocExtension::instance()->ReleaseFreeMemory();
}

}  // namespace inferd::memory
