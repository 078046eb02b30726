// Activation memory: what one forward of a model allocates beyond what the
// process already holds, measured on the calling thread (an executor) and
// expressed per item (and per token for a model of variable lengths), so
// that memory admission (memory_admission.h) can tell what a batch will need
// before it runs.
//
// The method: the process's peak resident memory around one forward. Before
// it, the allocator hands its free pages back (MemoryProbe::release_free, so
// that pages freed by earlier forwards cannot hide this one's) and the peak
// is reset (/proc/self/clear_refs "5" resets VmHWM); after it, the peak
// (VmHWM) minus the resident memory before is what the forward needed at its
// highest. It is a figure the kernel keeps, so it holds alike for libtorch,
// ONNX Runtime and any other runtime with its own allocator or arena, and
// it counts the temporaries freed before the forward ends (what an
// allocator's "bytes allocated now" misses). Its limits: the peak is the
// process's, so another forward running at the same moment on another
// executor adds to it (the figure errs high, the safe side), and a runtime
// whose arena already holds enough (ONNX Runtime after a larger batch) adds
// nothing to the resident size for that forward (also safe: its resident
// memory already counts it). Measurements are serialised in the process
// (one peak register).
//
// Per item = peak / items of the measured batch; per token = peak / (items x
// padded length) at the longest length measured, which bounds shorter ones
// (attention's share per token grows with the length).
//
// Thread-safety: MeasureActivation may be called from any thread; it holds a
// process-wide mutex while it measures.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace inferd::scheduler {

// How the process's memory is read; the server fills it from /proc
// (repository/memory_budget.h) and its allocator, tests with fakes. All
// three set, or measuring is off.
struct MemoryProbe {
  std::function<int64_t()> resident;  // resident bytes now
  std::function<int64_t()>
      take_peak;  // peak resident bytes since the last call (0: unknown), resetting it
  std::function<void()> release_free;  // the allocator's free pages back to the system

  bool enabled() const { return resident && take_peak && release_free; }
};

struct ActivationMemory {
  int64_t bytes_per_item = 0;   // 0: not measured
  int64_t bytes_per_token = 0;  // models of variable lengths only
  // What was measured: a forward of `batch` items (of `length` tokens when
  // per token), which needed `peak_bytes` over the resident memory before it.
  int batch = 0;
  int64_t length = 0;
  int64_t peak_bytes = 0;

  bool measured() const { return bytes_per_item > 0; }
  // "3.1 MiB per item (a forward of 8 items needed 25 MiB)", for the log.
  std::string ToString() const;
};

// Runs `forward` once and measures it as above: `batch` items, `length`
// tokens per item (0 for a model of fixed dims). Unmeasured (all 0) when the
// probe is off or reads nothing; when only the peak cannot be read (clear_refs
// refused), the resident memory after the forward stands in for it (a lower
// bound). At one byte per item when
// measured, so that a forward that needed nothing still counts as measured.
ActivationMemory MeasureActivation(const MemoryProbe& probe, int batch, int64_t length,
                                   const std::function<void()>& forward);

}  // namespace inferd::scheduler
