#include "repository/internal/memory_ledger.h"

#include <algorithm>

namespace inferd::repository::internal {

void MemoryLedger::Commit(uint64_t serial, const std::string& model, int64_t bytes) {
  Release(serial);  // a serial is committed once; never counted twice
  charges_[serial] = Charge{model, bytes, false, false};
  resident_ += bytes;
  ModelBytes& m = models_[model];
  m.resident += bytes;
  ++m.charges;
  resident_since_recycle_ = true;
}

void MemoryLedger::Retire(uint64_t serial) {
  auto it = charges_.find(serial);
  if (it == charges_.end() || it->second.retired) return;
  it->second.retired = true;
  ++models_[it->second.model].retiring;
}

void MemoryLedger::MarkEvicting(uint64_t serial) {
  auto it = charges_.find(serial);
  if (it == charges_.end() || it->second.evicting) return;
  it->second.evicting = true;
  evicting_ += it->second.bytes;
}

std::optional<std::string> MemoryLedger::Release(uint64_t serial) {
  auto it = charges_.find(serial);
  if (it == charges_.end()) return std::nullopt;
  Charge c = std::move(it->second);
  charges_.erase(it);
  resident_ -= c.bytes;
  if (c.evicting) evicting_ -= c.bytes;
  auto m = models_.find(c.model);
  m->second.resident -= c.bytes;
  if (c.retired) --m->second.retiring;
  if (--m->second.charges == 0) models_.erase(m);
  return std::move(c.model);
}

int64_t MemoryLedger::ResidentOf(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? 0 : it->second.resident;
}

int MemoryLedger::RetiringOf(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? 0 : it->second.retiring;
}

bool MemoryLedger::Holds(const std::string& model) const { return models_.count(model) > 0; }

int MemoryLedger::serving() const {
  int n = 0;
  for (const auto& [serial, c] : charges_) n += c.retired || c.evicting ? 0 : 1;
  return n;
}

EvictionPlan MemoryLedger::PlanRoom(const std::vector<CacheEntry>& candidates, int64_t need,
                                    int64_t transient, bool* peak_left_out) const {
  EvictionPlan plan = PlanEviction(candidates, committed(), outside_ + transient, need, budget_);
  if (peak_left_out) *peak_left_out = plan.outside_left_out;
  if (plan.outside_left_out && transient > 0) {
    // No room for the load's peak: make it for what is outside the footprints.
    plan = PlanEviction(candidates, committed(), outside_, need, budget_);
  }
  return plan;
}

bool MemoryLedger::NoteOutsideLeftOut(bool left_out) {
  const bool newly = left_out && !outside_left_out_;
  outside_left_out_ = left_out;
  return newly;
}

bool MemoryLedger::ReadOutside(int64_t process_resident) {
  if (reserved_ > 0) return false;
  outside_ = std::max<int64_t>(0, process_resident - base_ - resident_);
  return true;
}

MemoryLedger::CacheRelease MemoryLedger::CacheReleaseDue() const {
  // With nothing resident, also when a release came while models were
  // resident (which recycles no thread) and models were resident since the
  // threads were last recycled.
  if (resident_ == 0 && (outside_ > outside_after_release_ || resident_since_recycle_)) {
    return CacheRelease::kEmpty;
  }
  if (limited() && outside_ > outside_after_release_ + budget_ / 10) return CacheRelease::kGrew;
  return CacheRelease::kNotDue;
}

}  // namespace inferd::repository::internal
