#include "scheduler/running_batches.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "unit/support/test_units.h"

namespace inferd::scheduler {
namespace {

using test_support::At;

RunningBatches::Tracked Request(int deadline_ms, std::vector<int>* answered, int id) {
  return {At(deadline_ms),
          [answered, id](StatusOr<InferenceResponse>) { answered->push_back(id); },
          static_cast<uint64_t>(id), nullptr};
}

RunningBatches::Entry Batch(int start_ms, int limit_ms) {
  RunningBatches::Entry e;
  e.start = At(start_ms);
  e.limit = At(limit_ms);
  e.items = 1;
  e.num_requests = 1;
  e.bytes = 10;
  return e;
}

TEST(RunningBatchesTest, EndReturnsTheBatchOnce) {
  RunningBatches running;
  auto token = running.Begin(Batch(0, 1000));
  EXPECT_FALSE(running.empty());
  auto ended = running.End(token);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->bytes, 10u);
  EXPECT_FALSE(running.End(token).has_value());
  EXPECT_TRUE(running.empty());
}

TEST(RunningBatchesTest, RequestsPastTheirDeadlineAreDueWhileTheBatchRuns) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 10'000);
  e.requests = {Request(100, &answered, 1), Request(300, &answered, 2)};
  auto token = running.Begin(std::move(e));
  EXPECT_EQ(running.NextWake(), At(100));
  EXPECT_TRUE(running.TakeDue(At(99)).expired.empty());
  auto due = running.TakeDue(At(100));
  ASSERT_EQ(due.expired.size(), 1u);
  EXPECT_TRUE(due.hung.empty());
  due.expired[0].done(DeadlineExceeded("x"));
  EXPECT_EQ(answered, std::vector<int>{1});
  EXPECT_EQ(running.NextWake(), At(300));  // the answered one is no longer watched
  auto ended = running.End(token);         // the batch itself goes on to its end
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->requests.size(), 1u);
}

TEST(RunningBatchesTest, ABatchPastItsLimitIsGivenUpAndItsThreadToldSo) {
  RunningBatches running;
  auto e = Batch(0, 2000);
  e.executor = 1;
  auto token = running.Begin(std::move(e));
  auto other = running.Begin(Batch(0, 5000));
  EXPECT_EQ(running.NextWake(), At(2000));
  auto due = running.TakeDue(At(2500));
  ASSERT_EQ(due.hung.size(), 1u);
  EXPECT_EQ(due.hung[0].executor, 1);
  EXPECT_FALSE(running.End(token).has_value());  // the stuck thread must leave
  EXPECT_TRUE(running.End(other).has_value());
}

TEST(RunningBatchesTest, JoinedRequestsAreWatchedAndCounted) {
  std::vector<int> answered;
  RunningBatches running;
  auto token = running.Begin(Batch(0, 1000));
  running.Join(token, Request(50, &answered, 7), 3, 30);
  EXPECT_EQ(running.NextWake(), At(50));
  auto due = running.TakeDue(At(2000));  // past the limit: the whole batch is due
  ASSERT_EQ(due.hung.size(), 1u);
  EXPECT_EQ(due.hung[0].items, 4);
  EXPECT_EQ(due.hung[0].num_requests, 2u);
  EXPECT_EQ(due.hung[0].bytes, 40u);
  EXPECT_EQ(due.hung[0].requests.size(), 1u);
}

TEST(RunningBatchesTest, RequestsGivenBackAreNoLongerWatchedOrCounted) {
  std::vector<int> answered;
  RunningBatches running;
  auto token = running.Begin(Batch(0, 1000));
  running.Join(token, Request(50, &answered, 7), 3, 30);
  running.Join(token, Request(60, &answered, 8), 2, 20);
  EXPECT_TRUE(running.Leave(token, {7}, 3, 30));
  EXPECT_EQ(running.NextWake(), At(60)) << "7 went back to the queue";
  auto due = running.TakeDue(At(2000));
  ASSERT_EQ(due.hung.size(), 1u);
  EXPECT_EQ(due.hung[0].items, 1 + 2);
  EXPECT_EQ(due.hung[0].num_requests, 2u);
  EXPECT_EQ(due.hung[0].bytes, 10u + 20u);
  ASSERT_EQ(due.hung[0].requests.size(), 1u);
  EXPECT_EQ(due.hung[0].requests[0].seq, 8u);
  EXPECT_FALSE(running.Leave(token, {8}, 2, 20)) << "given up: nothing can leave it";
}

TEST(RunningBatchesTest, ABatchWhoseEveryRequestWasAnsweredIsUnwaited) {
  std::vector<int> answered;
  RunningBatches running;
  auto a = Batch(0, 10'000);
  a.requests = {Request(100, &answered, 1), Request(300, &answered, 2)};
  auto b = Batch(50, 10'000);
  b.requests = {Request(100, &answered, 3)};
  auto ta = running.Begin(std::move(a));
  auto tb = running.Begin(std::move(b));
  EXPECT_FALSE(running.HasUnwaited());
  EXPECT_EQ(running.TakeDue(At(100)).expired.size(), 2u);
  EXPECT_TRUE(running.HasUnwaited()) << "b's one request was answered";
  EXPECT_TRUE(running.TakeUnwaited(0).empty());
  auto taken = running.TakeUnwaited(5);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].start, At(50));
  EXPECT_FALSE(running.End(tb).has_value()) << "its thread must leave";
  EXPECT_FALSE(running.HasUnwaited()) << "a still has request 2";
  EXPECT_TRUE(running.End(ta).has_value());
}

// A batch that answered its requests itself and has not ended yet (its
// thread is between the answers and End) is finishing, not unwaited: its
// clients closing their connections after the answer (is_cancelled) or a
// deadline passing then must not give its thread up.
TEST(RunningBatchesTest, ABatchThatAnsweredItsRequestsItselfIsNotUnwaited) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 10'000);
  auto once = std::make_shared<AnswerOnce>(
      [&answered](StatusOr<InferenceResponse>) { answered.push_back(1); });
  RunningBatches::Tracked r = Request(100, &answered, 1);
  r.is_cancelled = [] { return true; };  // the client left after its answer
  r.once = once;
  e.requests = {r};
  auto token = running.Begin(std::move(e));
  ASSERT_TRUE(once->Answer(InferenceResponse{}));  // the batch's own answer
  RunningBatches::Due due = running.TakeDue(At(200));
  EXPECT_TRUE(due.expired.empty());
  EXPECT_TRUE(due.cancelled.empty());
  EXPECT_FALSE(running.HasUnwaited());
  EXPECT_TRUE(running.TakeUnwaited(5).empty());
  EXPECT_TRUE(running.End(token).has_value()) << "its own thread ends it";
}

TEST(RunningBatchesTest, ARequestWhoseClientLeftIsDueAsCancelled) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 10'000);
  bool gone = false;
  auto r = Request(1000, &answered, 1);
  r.is_cancelled = [&gone] { return gone; };
  e.requests = {std::move(r)};
  running.Begin(std::move(e));
  EXPECT_TRUE(running.AnyCancellable());
  EXPECT_TRUE(running.TakeDue(At(10)).cancelled.empty());
  gone = true;
  auto due = running.TakeDue(At(20));
  ASSERT_EQ(due.cancelled.size(), 1u);
  EXPECT_TRUE(due.expired.empty());
  EXPECT_TRUE(running.HasUnwaited());
}

// An overdue batch is demoted only while another model waits: it stays,
// its requests watched, until they are all answered (settled), and nothing
// may leave or join it; its thread, ending it, learns that it was demoted.
TEST(RunningBatchesTest, AnOverdueBatchIsDemotedAndSettlesWhenItsRequestsAreAnswered) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 10'000);
  e.overdue_at = At(80);
  e.requests = {Request(1000, &answered, 1)};
  auto token = running.Begin(std::move(e));
  int tag = 0;
  const auto* other = reinterpret_cast<const ScheduledModel*>(&tag);
  const std::vector<const ScheduledModel*> own_only = {nullptr};  // the batch's own model
  EXPECT_EQ(running.NextOverdue(own_only), TimePoint::max());
  EXPECT_EQ(running.NextOverdue({other}), At(80));
  EXPECT_TRUE(running.TakeOverdue(At(100), 5, own_only).empty());
  EXPECT_TRUE(running.TakeOverdue(At(79), 5, {other}).empty());
  EXPECT_TRUE(running.TakeOverdue(At(100), 0, {other}).empty());
  auto demoted = running.TakeOverdue(At(100), 5, {other});
  ASSERT_EQ(demoted.size(), 1u);
  EXPECT_TRUE(demoted[0].demoted);
  EXPECT_FALSE(running.OnExecutor(token));
  EXPECT_TRUE(running.TakeOverdue(At(200), 5, {other}).empty()) << "demoted once";
  EXPECT_EQ(running.NextOverdue({other}), TimePoint::max());
  EXPECT_FALSE(running.Leave(token, {1}, 1, 10));
  EXPECT_EQ(running.NextWake(), At(1000)) << "its request is still watched";
  auto due = running.TakeDue(At(1000));
  ASSERT_EQ(due.expired.size(), 1u);
  ASSERT_EQ(due.settled.size(), 1u);
  EXPECT_EQ(due.settled[0].bytes, 10u);
  EXPECT_FALSE(running.HasUnwaited()) << "settled, not given up twice";
  EXPECT_FALSE(running.End(token).has_value());
}

TEST(RunningBatchesTest, ADemotedBatchEndedByItsThreadSaysSo) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 10'000);
  e.overdue_at = At(80);
  e.requests = {Request(1000, &answered, 1)};
  auto token = running.Begin(std::move(e));
  EXPECT_TRUE(running.OnExecutor(token));
  int tag = 0;
  ASSERT_EQ(running.TakeOverdue(At(100), 5, {reinterpret_cast<const ScheduledModel*>(&tag)}).size(),
            1u);
  auto ended = running.End(token);
  ASSERT_TRUE(ended.has_value());
  EXPECT_TRUE(ended->demoted);
}

// A demoted batch's limit counts what it ran: its time on the executor
// before the demotion, then its thread's CPU time. Starved at SCHED_IDLE it
// is not hung at its wall-clock limit; its limit moves on by what it has
// left to run, and it is hung once it has run that. Not demoted, or without
// CPU clocks, the wall clock decides as before.
TEST(RunningBatchesTest, ADemotedBatchIsHungOnlyOnceItHasRunItsLimit) {
  std::vector<int> answered;
  RunningBatches running;
  Duration cpu = std::chrono::milliseconds(500);  // the thread's clock, by hand
  const RunningBatches::ThreadCpu clock = [&cpu](int) -> std::optional<Duration> { return cpu; };
  auto e = Batch(0, 1000);
  e.overdue_at = At(80);
  e.requests = {Request(60'000, &answered, 1)};
  running.Begin(std::move(e));
  auto not_demoted = Batch(0, 1000);  // beside it: hung at its wall limit
  not_demoted.requests = {Request(60'000, &answered, 2)};
  running.Begin(std::move(not_demoted));
  int tag = 0;
  const std::vector<const ScheduledModel*> other = {reinterpret_cast<const ScheduledModel*>(&tag)};
  ASSERT_EQ(running.TakeOverdue(At(100), 1, other, clock).size(), 1u);  // ran 100 ms so far
  cpu += std::chrono::milliseconds(300);  // then 300 ms of CPU by 1000 ms: 400 of 1000
  auto due = running.TakeDue(At(1000), clock);
  ASSERT_EQ(due.hung.size(), 1u);
  EXPECT_FALSE(due.hung[0].demoted);
  EXPECT_EQ(running.NextWake(), At(1600)) << "600 ms left to run";
  cpu += std::chrono::milliseconds(599);
  EXPECT_TRUE(running.TakeDue(At(1600), clock).hung.empty()) << "1 ms left: moved on again";
  EXPECT_EQ(running.NextWake(), At(1601));
  cpu += std::chrono::milliseconds(1);
  due = running.TakeDue(At(1601), clock);
  ASSERT_EQ(due.hung.size(), 1u);
  EXPECT_TRUE(due.hung[0].demoted);
  EXPECT_EQ(due.hung[0].run_limit(), std::chrono::milliseconds(1000)) << "the model's limit";
  EXPECT_TRUE(running.empty());
}

TEST(RunningBatchesTest, ADemotedBatchWithoutCpuClocksIsHungAtItsWallLimit) {
  std::vector<int> answered;
  RunningBatches running;
  auto e = Batch(0, 1000);
  e.overdue_at = At(80);
  e.requests = {Request(60'000, &answered, 1)};
  running.Begin(std::move(e));
  int tag = 0;
  ASSERT_EQ(running.TakeOverdue(At(100), 1, {reinterpret_cast<const ScheduledModel*>(&tag)}).size(),
            1u);
  EXPECT_EQ(running.TakeDue(At(1000)).hung.size(), 1u);
}

TEST(RunningBatchesTest, NothingRunningWakesNever) {
  RunningBatches running;
  EXPECT_EQ(running.NextWake(), TimePoint::max());
}

}  // namespace
}  // namespace inferd::scheduler
