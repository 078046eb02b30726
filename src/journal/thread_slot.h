// JournalThreadSlot: a small number for the calling thread, unique among the
// threads alive now, for the forward journal's slots (forward_journal.h).
//
// A thread claims the lowest free number at its first call (a scan of an
// atomic bitmap, once per thread) and frees it when it ends, so threads that
// come and go (recycled executors, load threads) reuse the numbers. Past
// kJournalSlots live threads, the extra ones share the last number: their
// marks can overwrite each other, which only makes a crash report less
// precise.
// Thread-safety: any thread; lock-free.
#pragma once

#include <cstdint>

namespace inferd::journal {

inline constexpr int kJournalSlots = 256;

namespace internal {
int ClaimThreadSlot();
}  // namespace internal

inline int JournalThreadSlot() {
  static thread_local int slot = -1;
  if (slot < 0) [[unlikely]] slot = internal::ClaimThreadSlot();
  return slot;
}

}  // namespace inferd::journal
