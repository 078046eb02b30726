// INFERD_ALLOCATOR=glibc (thresholds raised at start) or system (untouched).
#include <malloc.h>

#include <mutex>

#include "memory/allocator.h"

namespace inferd::memory {

void ConfigureAllocator() {
#if INFERD_GLIBC_MALLOPT
  static std::once_flag once;
  std::call_once(once, [] {
    // Blocks below 256 MiB come from the heap instead of their own mmap, and
    // the heap top is trimmed only past 1 GiB free: activations are reused
    // from one forward to the next instead of being unmapped and faulted in
    // again. (Setting either also turns off glibc's dynamic mmap threshold.)
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

std::string_view AllocatorName() {
#if INFERD_GLIBC_MALLOPT
  return "glibc";
#else
  return "system";
#endif
}

void ReleaseFreeMemory() { malloc_trim(0); }

}  // namespace inferd::memory
