#include "journal/thread_slot.h"

#include <atomic>

namespace inferd::journal::internal {
namespace {

std::atomic<bool> g_taken[kJournalSlots];

// Frees the thread's number when the thread ends.
struct Claim {
  int slot = -1;
  ~Claim() {
    if (slot >= 0 && slot < kJournalSlots - 1) g_taken[slot].store(false, std::memory_order_release);
  }
};

}  // namespace

int ClaimThreadSlot() {
  static thread_local Claim claim;
  for (int i = 0; i < kJournalSlots - 1; ++i) {
    bool expected = false;
    if (!g_taken[i].load(std::memory_order_relaxed) &&
        g_taken[i].compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      claim.slot = i;
      return i;
    }
  }
  claim.slot = kJournalSlots - 1;  // shared by the overflow
  return claim.slot;
}

}  // namespace inferd::journal::internal
