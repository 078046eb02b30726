#include "scheduler/running_batches.h"

#include <algorithm>

#include "scheduler/internal/scheduled_model.h"

namespace inferd::scheduler {

namespace {

// A demoted batch of mirrored copies: it keeps the spare capacity until its
// thread ends it, whatever its limit (it runs only on idle cycles, and its
// candidate is not to be quarantined for that).
bool HeldTillItsThreadEnds(const RunningBatches::Entry& e) { return e.demoted && e.spare; }

// Whether a batch past its limit at `now` has run it. A demoted one that
// has run less (its time before the demotion, at normal priority on its
// executor, plus the CPU time its thread got since) is not: its limit moves
// on by what is left.
bool RanItsLimit(RunningBatches::Entry& e, TimePoint now, const RunningBatches::ThreadCpu& cpu) {
  if (!e.demoted || !cpu || !e.cpu_at_demotion) return true;
  const std::optional<Duration> used = cpu(e.thread_id);
  if (!used) return true;
  const Duration ran = (e.demoted_at - e.start) + (*used - *e.cpu_at_demotion);
  const Duration limit = e.run_limit();
  if (ran >= limit) return true;
  e.moved_limit = limit;
  e.limit = now + (limit - ran);
  return false;
}

}  // namespace

RunningBatches::Token RunningBatches::Begin(Entry entry) {
  const Token token = next_++;
  entries_.emplace(token, std::move(entry));
  return token;
}

void RunningBatches::Join(Token token, Tracked request, int items, size_t bytes) {
  auto it = entries_.find(token);
  if (it == entries_.end()) return;
  it->second.requests.push_back(std::move(request));
  it->second.items += items;
  it->second.num_requests += 1;
  it->second.bytes += bytes;
}

bool RunningBatches::Leave(Token token, const std::vector<uint64_t>& seqs, int items,
                           size_t bytes) {
  auto it = entries_.find(token);
  if (it == entries_.end() || it->second.demoted) return false;
  Entry& e = it->second;
  std::erase_if(e.requests, [&](const Tracked& t) {
    return std::find(seqs.begin(), seqs.end(), t.seq) != seqs.end();
  });
  e.items -= items;
  e.num_requests -= seqs.size();
  e.bytes -= bytes;
  return true;
}

std::optional<RunningBatches::Entry> RunningBatches::End(Token token) {
  auto it = entries_.find(token);
  if (it == entries_.end()) return std::nullopt;
  Entry e = std::move(it->second);
  entries_.erase(it);
  return e;
}

RunningBatches::Due RunningBatches::TakeDue(TimePoint now, const ThreadCpu& cpu) {
  Due due;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (e.limit <= now && !HeldTillItsThreadEnds(e) && RanItsLimit(e, now, cpu)) {
      due.hung.push_back(std::move(e));
      it = entries_.erase(it);
      continue;
    }
    auto& r = e.requests;
    auto late = std::stable_partition(r.begin(), r.end(), [now](const Tracked& t) {
      return t.deadline > now && !(t.is_cancelled && t.is_cancelled());
    });
    for (auto l = late; l != r.end(); ++l) {
      if (l->once && l->once->answered()) continue;  // its batch answered it: nothing due
      e.watchdog_answered = true;
      (l->deadline <= now ? due.expired : due.cancelled).push_back(std::move(*l));
    }
    r.erase(late, r.end());
    // A demoted copy stays till its thread ends it: it holds the spare capacity.
    if (e.demoted && !e.spare && r.empty()) {
      due.settled.push_back(std::move(e));
      it = entries_.erase(it);
      continue;
    }
    ++it;
  }
  return due;
}

std::vector<RunningBatches::Entry> RunningBatches::TakeUnwaited(size_t at_most) {
  std::vector<Token> tokens;
  for (const auto& [token, e] : entries_) {
    if (!e.demoted && e.watchdog_answered && e.requests.empty()) tokens.push_back(token);
  }
  std::stable_sort(tokens.begin(), tokens.end(), [this](Token a, Token b) {
    return entries_.at(a).start < entries_.at(b).start;
  });
  if (tokens.size() > at_most) tokens.resize(at_most);
  std::vector<Entry> taken;
  for (Token t : tokens) {
    auto it = entries_.find(t);
    taken.push_back(std::move(it->second));
    entries_.erase(it);
  }
  return taken;
}

bool RunningBatches::HasUnwaited() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const auto& kv) {
    return !kv.second.demoted && kv.second.watchdog_answered && kv.second.requests.empty();
  });
}

namespace {

// Whether a model other than `own` has work queued.
bool OthersWait(const ScheduledModel* own, const std::vector<const ScheduledModel*>& waiting) {
  return std::any_of(waiting.begin(), waiting.end(),
                     [own](const ScheduledModel* m) { return m != own; });
}

}  // namespace

std::vector<RunningBatches::Entry> RunningBatches::TakeOverdue(
    TimePoint now, size_t at_most, const std::vector<const ScheduledModel*>& waiting,
    const ThreadCpu& cpu) {
  std::vector<Token> tokens;
  for (const auto& [token, e] : entries_) {
    if (!e.demoted && !e.requests.empty() && e.overdue_at <= now &&
        OthersWait(e.model.get(), waiting)) {
      tokens.push_back(token);
    }
  }
  std::stable_sort(tokens.begin(), tokens.end(), [this](Token a, Token b) {
    return entries_.at(a).start < entries_.at(b).start;
  });
  if (tokens.size() > at_most) tokens.resize(at_most);
  std::vector<Entry> taken;
  for (Token t : tokens) {
    Entry& e = entries_.at(t);
    e.demoted = true;
    e.demoted_at = now;
    if (cpu) e.cpu_at_demotion = cpu(e.thread_id);
    // Everything but its requests, which stay tracked here.
    std::vector<Tracked> requests = std::move(e.requests);
    Entry copy = e;
    e.requests = std::move(requests);
    taken.push_back(std::move(copy));
  }
  return taken;
}

TimePoint RunningBatches::NextOverdue(const std::vector<const ScheduledModel*>& waiting) const {
  TimePoint next = TimePoint::max();
  for (const auto& [token, e] : entries_) {
    if (!e.demoted && !e.requests.empty() && OthersWait(e.model.get(), waiting)) {
      next = std::min(next, e.overdue_at);
    }
  }
  return next;
}

bool RunningBatches::OnExecutor(Token token) const {
  auto it = entries_.find(token);
  return it != entries_.end() && !it->second.demoted;
}

std::vector<Completion> RunningBatches::Unanswered() const {
  std::vector<Completion> out;
  for (const auto& [token, e] : entries_) {
    for (const Tracked& t : e.requests) out.push_back(t.done);
  }
  return out;
}

bool RunningBatches::AnyCancellable() const {
  for (const auto& [token, e] : entries_) {
    for (const auto& r : e.requests) {
      if (r.is_cancelled) return true;
    }
  }
  return false;
}

TimePoint RunningBatches::NextWake() const {
  TimePoint wake = TimePoint::max();
  for (const auto& [token, e] : entries_) {
    if (!HeldTillItsThreadEnds(e)) wake = std::min(wake, e.limit);
    for (const auto& r : e.requests) wake = std::min(wake, r.deadline);
  }
  return wake;
}

std::vector<std::string> RunningBatches::Describe(TimePoint now) const {
  std::vector<std::string> lines;
  for (const auto& [token, e] : entries_) {
    lines.push_back("model '" + e.model->spec().name + "' on executor " +
                    std::to_string(e.executor) + ", running for " +
                    std::to_string(MillisBetween(e.start, now)) + " ms (" +
                    std::to_string(e.num_requests) + " requests" +
                    (e.demoted ? ", demoted: its executor handed over)" : ")"));
  }
  return lines;
}

}  // namespace inferd::scheduler
