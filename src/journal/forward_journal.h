// ForwardJournal: which model versions are running a forward now, kept in a
// small memory-mapped file (--state-dir/forward-journal) that outlives the
// process: after a crash the next serving process reads what was running
// (ReadJournal) and crash_history.h decides what to quarantine.
//
// Layout (fixed size, about 150 KiB): a header; a table of model versions,
// registered at load by name and version and never removed while the process
// lives; one slot per thread that runs forwards (thread_slot.h), a cache line
// each. A forward's start is one store of the version's number into the
// thread's slot and its end one store of 0: no syscall, no lock, no cache line
// shared between executors (bench_forward_journal measures it). The file is
// mapped MAP_SHARED, so the kernel keeps the stores when the process dies by
// any signal, SIGKILL included; only a crash of the machine loses them.
//
// Thread-safety: Register takes a mutex (load time, not the request path);
// Begin/End may be called from any thread; ReadJournal reads a file whose
// writer is gone. Ownership: the journal owns the mapping; ForwardMark is a
// plain pointer + number, valid while the journal lives (the process).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "journal/thread_slot.h"

namespace inferd::journal {

inline constexpr int kJournalModels = 1024;
inline constexpr size_t kJournalNameBytes = 120;
inline constexpr int kJournalSlotWords = 16;  // one 64-byte cache line per slot
// The number of a version the full table could not name.
inline constexpr uint32_t kJournalUnnamed = 0xFFFFFFFFu;

namespace internal {
struct JournalFile;  // the mapped layout (forward_journal.cc)
}

class ForwardJournal {
 public:
  // Creates or truncates `path` and maps it, every slot idle, this process's
  // pid in the header. Errors: kUnavailable naming the path and errno.
  static StatusOr<std::unique_ptr<ForwardJournal>> Create(const std::string& path);
  ~ForwardJournal();
  ForwardJournal(const ForwardJournal&) = delete;
  ForwardJournal& operator=(const ForwardJournal&) = delete;

  // The number of `model` `version` in the table (registered at the first
  // call, never 0); kJournalUnnamed when the table is full.
  uint32_t Register(const std::string& model, int64_t version);

  // The calling thread starts (`id` = Register's number) or ends a forward.
  void Begin(uint32_t id) {
    std::atomic_ref<uint32_t>(slots_[JournalThreadSlot() * kJournalSlotWords])
        .store(id, std::memory_order_relaxed);
  }
  void End() {
    std::atomic_ref<uint32_t>(slots_[JournalThreadSlot() * kJournalSlotWords])
        .store(0, std::memory_order_relaxed);
  }

  // Marks the file as left on purpose (a drain, even one that abandons
  // forwards still running): ReadJournal then reports nothing running.
  void MarkClean();

 private:
  ForwardJournal(internal::JournalFile* file, uint32_t* slots) : file_(file), slots_(slots) {}

  internal::JournalFile* const file_;
  // The slots' words; a slot's number is its first (stride kJournalSlotWords).
  uint32_t* const slots_;
  std::mutex mu_;
  // Plain std::mutex: this header reaches files that include gRPC, whose
  // annotation macros clash with common/thread_annotations.h.
  uint32_t models_ = 0;  // guarded by mu_
};

// What a serving process marks per model version: its journal and number.
// Empty (no journal) marks nothing. Copied into each model's runner.
struct ForwardMark {
  ForwardJournal* journal = nullptr;
  uint32_t id = 0;
  void Begin() const {
    if (journal) journal->Begin(id);
  }
  void End() const {
    if (journal) journal->End();
  }
};

// Marks a forward for the scope's life (End also when the forward throws).
class ForwardScope {
 public:
  explicit ForwardScope(const ForwardMark& mark) : mark_(mark) { mark_.Begin(); }
  ~ForwardScope() { mark_.End(); }
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;

 private:
  const ForwardMark& mark_;
};

// What a journal file says about the process that wrote it.
struct JournalSnapshot {
  int64_t pid = 0;
  bool clean = false;  // MarkClean was called: nothing counts as running
  // "model:version" of each slot busy when the process ended ("?" for a
  // version the full table could not name), each once.
  std::vector<std::string> running;
};
// Errors: kNotFound (no file: a first start), kFailedPrecondition (not a journal:
// another size or magic).
StatusOr<JournalSnapshot> ReadJournal(const std::string& path);

}  // namespace inferd::journal
