// CPU time of the calling thread: what a measurement on a shared, noisy
// machine should use when the work it times runs on that one thread (a
// single-threaded forward): time spent preempted by other processes does not
// count, so the figure does not depend on the machine's load.
// Thread-safety: reads the calling thread's clock only.
#pragma once

namespace inferd {

// Seconds of CPU the calling thread has used (CLOCK_THREAD_CPUTIME_ID).
double ThreadCpuSeconds();

}  // namespace inferd
