#include "scheduler/memory_admission.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/byte_size.h"

namespace inferd::scheduler {
namespace {

constexpr int64_t kMinMargin = int64_t{64} << 20;

}  // namespace

int64_t AdmissionMargin(int64_t limit) {
  return std::min(limit / 2, std::max(kMinMargin, limit / 20));
}

AdmissionDecision Admit(const std::vector<int64_t>& prefix_needs, const AdmissionFigures& f) {
  AdmissionDecision d;
  d.figures = f;
  if (prefix_needs.empty()) return d;
  const int64_t idle = std::max<int64_t>(0, f.resident - f.reserved);
  if (idle + prefix_needs.front() > f.limit) {
    d.refuse = true;
    d.needed = prefix_needs.front();
    return d;
  }
  const int64_t room = f.limit - f.resident - f.reserved;
  while (d.run < prefix_needs.size() && prefix_needs[d.run] <= room) ++d.run;
  if (d.run == 0) {
    d.wait = true;
    d.needed = prefix_needs.front();
    return d;
  }
  d.needed = prefix_needs[d.run - 1];
  return d;
}

MemoryAdmission::MemoryAdmission(Options options)
    : options_(std::move(options)), limit_(options_.limit - AdmissionMargin(options_.limit)) {}

AdmissionFigures MemoryAdmission::Read() const {
  AdmissionFigures f;
  f.limit = limit_;
  f.resident = options_.probe.resident ? options_.probe.resident() : 0;
  f.reserved = reserved_;
  return f;
}

AdmissionDecision MemoryAdmission::Decide(const std::vector<int64_t>& prefix_needs) {
  MutexLock lock(&mu_);
  while (true) {
    AdmissionDecision d = Admit(prefix_needs, Read());
    if ((d.refuse || d.wait || d.run < prefix_needs.size()) && options_.probe.release_free) {
      options_.probe.release_free();
      d = Admit(prefix_needs, Read());
    }
    if (d.wait) {
      released_.WaitFor(&mu_, std::chrono::milliseconds(100));
      continue;
    }
    if (!d.refuse) reserved_ += d.needed;
    return d;
  }
}

void MemoryAdmission::Release(int64_t reserved) {
  {
    MutexLock lock(&mu_);
    reserved_ -= reserved;
  }
  released_.SignalAll();
}

Status MemoryAdmission::Refusal(const std::string& model, const AdmissionDecision& d, int items,
                                int64_t tokens) const {
  const AdmissionFigures& f = d.figures;
  std::string what = std::to_string(items) + " item" + (items == 1 ? "" : "s");
  if (tokens > 0) what += " of " + std::to_string(tokens) + " padded tokens";
  std::string resident = "resident " + FormatMiB(f.resident);
  if (f.reserved > 0)
    resident += " less " + FormatMiB(f.reserved) + " reserved by batches running now";
  return Status(StatusCode::kPayloadTooLarge,
                model + ": the request (" + what + ") needs " + FormatMiB(d.needed) +
                    " of activation memory and cannot fit even alone: " + resident + ", plus " +
                    FormatMiB(d.needed) + ", is over the memory limit of " + FormatMiB(f.limit) +
                    " (" + options_.limit_source + ", less a margin of " +
                    FormatMiB(options_.limit - f.limit) + "); send fewer items or shorter inputs");
}

}  // namespace inferd::scheduler
