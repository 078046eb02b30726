// Sets up the calling thread's intra-op pool for libtorch on an OpenMP build.
//
// OpenMP keeps one team per calling thread, so each executor thread that
// calls ConfigureIntraOpPool gets its own team of `n` threads, member i pinned
// to cores[i] (the calling thread is member 0). The team is reused by later
// parallel regions on that thread, so the pinning sticks.
// Inter-op threads are set to 1 once per process, before any inter-op work.
// Thread-safety: configures only the calling thread; may be called from many
// threads at once. Idempotent per thread.
#pragma once

#include <vector>

#include "common/status.h"

namespace inferd::backend {

// Sets libtorch's inter-op pool to 1 thread, once per process; later calls do
// nothing. Must run before any inter-op work (TorchBackend::Create calls it).
void LimitInterOpThreads();

// n = cores.size() when cores is non-empty (then each member is pinned), else
// max(num_threads, 1) unpinned threads. A failed pin is reported, not fatal.
Status ConfigureIntraOpPool(const std::vector<int>& cores, int num_threads);

// The width the scheduler gave the calling thread for its next calls
// (Backend::SetCallWidth): kept, and applied by ApplyCallWidth at the next
// torch forward on this thread, so that a widened thread that runs another
// runtime's model leaves its OpenMP team alone.
void RequestCallWidth(const std::vector<int>& cores, int num_threads);
// Re-sizes and re-pins the calling thread's team (ConfigureIntraOpPool) when
// the width last requested differs from the one it has. Cheap when equal.
Status ApplyCallWidth();

// The cores the calling thread may run on (its affinity mask), for tests and logs.
std::vector<int> CurrentThreadCores();

}  // namespace inferd::backend
