#include "scheduler/activation_memory.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "common/byte_size.h"

namespace inferd::scheduler {
namespace {

// One peak register per process: two measurements at once would reset each
// other's peak.
std::mutex& MeasureMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

std::string ActivationMemory::ToString() const {
  if (!measured()) return "not measured";
  std::string s = FormatMiB(bytes_per_item) + " per item";
  if (bytes_per_token > 0) s += ", " + std::to_string(bytes_per_token / 1024) + " KiB per token";
  s += " (a forward of " + std::to_string(batch) + " item" + (batch == 1 ? "" : "s");
  if (length > 0) s += " x " + std::to_string(length) + " tokens";
  return s + " needed " + FormatMiB(peak_bytes) + ")";
}

ActivationMemory MeasureActivation(const MemoryProbe& probe, int batch, int64_t length,
                                   const std::function<void()>& forward) {
  ActivationMemory a;
  if (!probe.enabled() || batch < 1) {
    forward();
    return a;
  }
  std::lock_guard<std::mutex> lock(MeasureMutex());
  probe.release_free();
  const int64_t before = probe.resident();
  probe.take_peak();  // the peak starts here
  forward();
  const int64_t peak = std::max(probe.take_peak(), probe.resident());
  if (before <= 0 || peak <= 0) return a;
  a.batch = batch;
  a.length = length;
  a.peak_bytes = std::max<int64_t>(0, peak - before);
  a.bytes_per_item = std::max<int64_t>(1, a.peak_bytes / batch);
  if (length > 0) a.bytes_per_token = std::max<int64_t>(1, a.peak_bytes / (batch * length));
  return a;
}

}  // namespace inferd::scheduler
