// WarmUpRuntime: runs libtorch's load path once, at start-up, on a tiny module
// built in memory (define, save, load, freeze, two forwards with a matrix
// product and a convolution).
//
// Why: the first model a process loads pays libtorch's one-time costs (code
// pages of the JIT, the serializer and oneDNN faulted in, lazily built
// registries): about 11 MiB of resident memory here. Paid by the first model,
// they would count in its measured footprint (repository/, the memory budget)
// although unloading it never gives them back; paid here, they are part of the
// server's own base.
// Call once, from the thread that creates the backend; never throws (a
// failure is logged: it only costs the attribution above).
#pragma once

namespace inferd::backend {

void WarmUpRuntime();

}  // namespace inferd::backend
