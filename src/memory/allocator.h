// The process's heap allocator, chosen at build time (CMake INFERD_ALLOCATOR),
// and the few things the server asks of it whichever it is.
//
// Why this exists: glibc malloc hands blocks above its mmap threshold back to
// the kernel on free and maps them again on the next call, so a convnet's
// multi-megabyte activations page-fault on every forward (MobileNetV3-small
// ran 5x slower per item at batch 8 than at batch 1 because of it). The
// allocator linked into the binary keeps freed memory for reuse, so the plain
// binary is fast with no LD_PRELOAD and no environment variable. See
// docs/PERFORMANCE.md for the measured comparison.
//
//   jemalloc  Debian's libjemalloc linked, decay set by `malloc_conf` in the binary
//             (default: its purge also returns what unloaded models freed)
//   tcmalloc  Debian's libtcmalloc_minimal linked into the binary
//   glibc     glibc malloc with mmap/trim thresholds raised by mallopt at start
//   system    glibc malloc untouched (sanitizer builds, which bring their own)
//
// Thread-safety: every function may be called from any thread at any time.
#pragma once

#include <string_view>

namespace inferd::memory {

// Applies the allocator's settings for serving (glibc: mallopt thresholds;
// tcmalloc: no background release of free pages). Call once, first thing in
// main(), before threads start; later calls do nothing.
void ConfigureAllocator();

// "tcmalloc", "jemalloc", "glibc" or "system": what this binary was built with.
std::string_view AllocatorName();

// Hands free heap memory back to the operating system (tcmalloc's
// ReleaseFreeMemory, jemalloc's purge of every arena, glibc's malloc_trim),
// so resident memory falls after a large free such as unloading a model;
// tcmalloc and jemalloc first flush the calling thread's cache, so call it on
// the thread that did the freeing.
// Costs page faults on the next allocations that reuse those pages: never
// call it on the request path.
void ReleaseFreeMemory();

}  // namespace inferd::memory
