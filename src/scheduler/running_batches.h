// RunningBatches: the batches the executors are running, as the scheduler's
// watchdog sees them from outside: their requests' deadlines and each batch's
// execution limit (max_execution_ms).
//
// A request whose deadline passes while its batch runs is due: the watchdog
// answers it 504 through its race-safe completion (AnswerOnce), and the
// executor's late result is dropped when it comes. A batch that runs past its
// limit is hung: TakeDue removes it, the watchdog answers what is left of it,
// replaces the executor thread and quarantines the model; the stuck thread,
// if it ever returns, finds its entry gone (End returns nullopt) and leaves.
// A batch whose every request has been answered by the watchdog (deadline
// passed, client gone) is unwaited: nobody reads its result. When other work
// waits, the scheduler takes it (TakeUnwaited) and gives its executor to a
// replacement thread at once, as for a hung batch, without waiting for the
// limit (issue 38).
// A batch still waited for that runs past its overdue time (well past what
// its model's measured forward predicts) while another model's work waits
// is demoted (TakeOverdue): the scheduler hands its executor to a
// replacement thread and lowers its thread, but the entry stays, so that its
// requests are still answered at their deadline (or by the thread, if it
// finishes). A demoted entry leaves when its thread ends it (End: the thread
// then exits), when every request of it has been answered (TakeDue's
// `settled`) or at its limit (`hung`). Its limit counts what it ran, not
// the time it waited for a core: a lowered thread runs only on idle cycles,
// and a slow forward starved by the neighbours is not a hung one. Given the
// threads' CPU clocks (ThreadCpu), a demoted batch's run is its time before
// the demotion plus the CPU time its thread got since.
//
// Pure bookkeeping with time passed in (no clock, no threads): the scheduler
// guards it with its mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "scheduler/answer_once.h"
#include "scheduler/inference_request.h"

namespace inferd::scheduler {

class ScheduledModel;

class RunningBatches {
 public:
  using Token = uint64_t;
  // The CPU time an executor thread (OS id) has run; nullopt once it ended.
  using ThreadCpu = std::function<std::optional<Duration>(int thread_id)>;
  // A request of a running batch that the watchdog may still have to answer.
  struct Tracked {
    TimePoint deadline = TimePoint::max();
    Completion done;   // race-safe (AnswerOnce): answering twice is harmless
    uint64_t seq = 0;  // QueuedRequest::seq: names it within its batch
    std::function<bool()> is_cancelled;  // InferenceRequest::is_cancelled; may be null
    std::shared_ptr<const AnswerOnce> once = nullptr;  // answered already? may be null
  };
  struct Entry {
    int executor = 0;
    int thread_id = 0;  // the executor thread's OS id (gettid), to lower its priority
    std::shared_ptr<ScheduledModel> model;  // held while it runs
    TimePoint start{};
    TimePoint limit = TimePoint::max();  // start + the model's max_execution_ms
    std::vector<Tracked> requests;       // not yet answered by the watchdog
    // For the accounting of a batch given up: everything it took and was
    // joined by (top-ups), answered or not.
    int items = 0;
    size_t num_requests = 0;
    size_t bytes = 0;
    // Executors parked for this batch (lone_request_width.h), un-parked when
    // it ends or is given up; the intra-op threads it runs on.
    std::vector<int> lent;
    int threads = 1;
    bool spare = false;  // every request at kSparePriority (a mirror's copies)
    // start + the model's ModelQueue::OverdueAfter(); max: never overdue.
    TimePoint overdue_at = TimePoint::max();
    bool demoted = false;  // its executor went to a replacement (TakeOverdue)
    TimePoint demoted_at{};
    std::optional<Duration> cpu_at_demotion = std::nullopt;  // its thread's CPU time then
    // The model's max_execution_ms for this batch: `limit` - `start` until
    // a demoted batch's limit moves on (TakeDue).
    Duration run_limit() const { return moved_limit ? *moved_limit : limit - start; }
    std::optional<Duration> moved_limit = std::nullopt;
    // The watchdog answered one of its requests (deadline passed, client
    // gone) before the batch did: only then can it be unwaited. A batch that
    // answered all its requests itself is finishing, whatever its clients do next.
    bool watchdog_answered = false;
  };
  struct Due {
    std::vector<Tracked> expired;    // deadline passed while running
    std::vector<Tracked> cancelled;  // client went away while running
    std::vector<Entry> hung;       // ran past their limit; removed
    // Demoted batches whose every request has now been answered; removed.
    // Not a mirror's copies (spare): those stay until their thread ends
    // them, holding the spare capacity (Scheduler::Impl::SpareCap), and are
    // never hung either.
    std::vector<Entry> settled;
  };

  Token Begin(Entry entry);
  // Requests that joined batch `token` while it ran (top-ups).
  void Join(Token token, Tracked request, int items, size_t bytes);
  // Requests `seqs` of batch `token` went back to the queue (given back by
  // its runner) with their `items` and `bytes`: no longer tracked. False
  // when the watchdog gave the batch up or demoted it (nothing changes).
  bool Leave(Token token, const std::vector<uint64_t>& seqs, int items, size_t bytes);
  // The batch ended: its entry, or nullopt when the watchdog gave it up.
  std::optional<Entry> End(Token token);
  // What is due at `now`: requests past their deadline or whose client went
  // away (no longer tracked) and batches past their limit (removed). With
  // `cpu`, a demoted batch past its limit that ran less than it (see the
  // top) stays, its limit moved on by what it has left to run.
  Due TakeDue(TimePoint now, const ThreadCpu& cpu = nullptr);
  // Removes and returns up to `at_most` unwaited batches (see the top),
  // the longest-running first.
  std::vector<Entry> TakeUnwaited(size_t at_most);
  // Whether a batch is unwaited now.
  bool HasUnwaited() const;
  // Marks demoted and returns (without their requests, which stay tracked)
  // up to `at_most` batches not demoted yet, still waited for, past their
  // overdue time at `now`, whose model is not the only one of `waiting`
  // (models with work queued), the longest-running first.
  // `cpu` (may be null) reads the demoted threads' CPU time at `now`.
  std::vector<Entry> TakeOverdue(TimePoint now, size_t at_most,
                                 const std::vector<const ScheduledModel*>& waiting,
                                 const ThreadCpu& cpu = nullptr);
  // When the first batch that TakeOverdue could take becomes overdue, for
  // the models `waiting` (TimePoint::max(): none).
  TimePoint NextOverdue(const std::vector<const ScheduledModel*>& waiting) const;
  // Whether batch `token` still runs on its executor (neither given up nor
  // demoted): only then may queued requests join it.
  bool OnExecutor(Token token) const;
  // The completions of the requests still tracked (race-safe copies).
  std::vector<Completion> Unanswered() const;
  // Whether a running request could be cancelled by its client (the
  // watchdog then polls while other work waits).
  bool AnyCancellable() const;
  // When something next becomes due (TimePoint::max(): nothing running).
  TimePoint NextWake() const;
  bool empty() const { return entries_.empty(); }
  // One line per running batch: model, executor, how long it has run.
  std::vector<std::string> Describe(TimePoint now) const;

 private:
  std::map<Token, Entry> entries_;
  Token next_ = 1;
};

}  // namespace inferd::scheduler
