// Forwards handed over before their limit while still waited for (issue 38):
// an overdue forward demoted, not failed; a mirror's copy giving its executor
// to a client. Fake models held at their gates and a fake clock: no sleeps.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/inference_request.h"
#include "unit/scheduler/isolation_fixture.h"
#include "unit/support/eventually.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using Answer = IsolationTest::Answer;
using OverdueTest = IsolationTest;

// A forward that runs far past its model's measured time (10 ms: overdue at
// 80 ms) while another model's request waits for the only executor is
// demoted, not failed: a new thread takes the executor and serves the
// waiting request, the overdue request still waits for its forward and is
// answered when it returns; that thread then leaves (no second executor),
// and the threads computing at normal priority never outnumbered the one
// core.
TEST_F(OverdueTest, AnOverdueForwardIsDemotedWhileItsRequestStillWaitsForIt) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  RunOneOf(m, 10);
  m.fake->CloseGate();
  auto overdue = Submit(m, "m1", clock_.Now() + std::chrono::seconds(60));
  m.fake->WaitForCalls(2);
  auto waiting = Submit(other, "other0");
  clock_.Advance(std::chrono::milliseconds(81));
  ASSERT_TRUE(waiting.get().ok());  // served while m1's forward is still held
  EXPECT_EQ(Overdue(), 1);
  EXPECT_EQ(Unwaited(), 0);
  EXPECT_EQ(scheduler_->abandoned_executors(), 1);
  EXPECT_NE(overdue.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  m.fake->OpenGate();
  auto res = overdue.get();
  ASSERT_TRUE(res.ok()) << res.status().ToString();  // its forward returned: answered
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
  EXPECT_TRUE(quarantined().empty());
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_EQ(registry_.GetGauge("inferd_compute_threads_peak", "", {}).value(), 1);
  EXPECT_TRUE(Submit(m, "m2").get().ok());  // the model serves on
  EXPECT_TRUE(Submit(other, "other1").get().ok());
}

// An overdue forward keeps its executor while no other model's work waits
// (its own queued requests do not count: they would only start another
// such forward), and it is never demoted before anything was measured.
// Demoted, its request is answered at its deadline; the batch then holds
// nothing, though its thread still runs.
TEST_F(OverdueTest, AnOverdueForwardIsDemotedOnlyForAnotherModelsWork) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  RunOneOf(m, 10);
  m.fake->CloseGate();
  auto overdue = Submit(m, "m1", clock_.Now() + std::chrono::seconds(1));
  m.fake->WaitForCalls(2);
  auto own = Submit(m, "m2", clock_.Now() + std::chrono::seconds(60));
  clock_.Advance(std::chrono::milliseconds(200));
  EXPECT_EQ(Overdue(), 0);
  auto waiting = Submit(other, "other0");  // now another model's work waits
  ASSERT_TRUE(waiting.get().ok());
  EXPECT_EQ(Overdue(), 1);
  clock_.Advance(std::chrono::seconds(1));
  auto res = overdue.get();  // at its deadline
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(scheduler_->abandoned_executors(), 1);  // still inside its forward
  m.fake->OpenGate();
  ASSERT_TRUE(own.get().ok());
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_EQ(Late("m"), 1);
  EXPECT_TRUE(quarantined().empty());
}

// Overdue is not hung: past the model's bound on stuck threads, demoted
// forwards whose requests still wait for them do not quarantine it (an input
// of more work than the timed one is slow, not broken); the request queued
// behind them is served once they return.
TEST_F(OverdueTest, OverdueForwardsThatStillServeTheirRequestsDoNotQuarantine) {
  StartScheduler(1, /*max_stuck_per_model=*/1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  RunOneOf(m, 10);
  m.fake->CloseGate();
  std::vector<Answer> overdue;
  std::optional<Answer> queued;
  for (int round = 0; round < 2; ++round) {
    overdue.push_back(Submit(m, "m", clock_.Now() + std::chrono::seconds(60)));
    m.fake->WaitForCalls(static_cast<size_t>(round) + 2);
    if (round == 1) queued = Submit(m, "queued", clock_.Now() + std::chrono::seconds(60));
    auto waiting = Submit(other, "other");
    clock_.Advance(std::chrono::milliseconds(100));
    ASSERT_TRUE(waiting.get().ok()) << "round " << round;
  }
  EXPECT_EQ(Overdue(), 2);
  m.fake->OpenGate();
  for (auto& a : overdue) EXPECT_TRUE(a.get().ok());  // both forwards returned in time
  EXPECT_TRUE(queued->get().ok());
  EXPECT_TRUE(quarantined().empty());
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
}

// With one executor a mirror's copy may start only while nothing else is
// queued; once a client's request of another model waits, the copy is
// demoted (its executor handed to a new thread that serves the client) yet
// still counts as the one copy running: the next copy waits for it, one more
// is refused (no_spare_executor), and the copy is answered when its forward
// returns. Its model is not quarantined for it.
TEST_F(OverdueTest, WithOneExecutorAMirroredCopyGivesWayToAClient) {
  StartScheduler(1);
  Model primary = Add("primary", Config(1));
  Model candidate = Add("candidate", Config(1));
  candidate.fake->CloseGate();
  auto copy = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
  Answer copy_answer = copy->get_future();
  const TimePoint far = clock_.Now() + std::chrono::seconds(600);
  ASSERT_TRUE(TrySubmit(candidate, "copy0", far, kSparePriority, copy).ok());
  candidate.fake->WaitForCalls(1);  // the copy holds the only executor
  auto served = Submit(primary, "p0");
  ASSERT_TRUE(served.get().ok());  // served while the copy's forward is held
  EXPECT_EQ(Overdue(), 1);
  auto waits = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
  Answer waits_answer = waits->get_future();
  ASSERT_TRUE(TrySubmit(candidate, "copy1", far, kSparePriority, waits).ok());
  Status refused = TrySubmit(candidate, "copy2", far, kSparePriority,
                             std::make_shared<std::promise<StatusOr<InferenceResponse>>>());
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.ToString();
  ASSERT_TRUE(Submit(primary, "p1").get().ok());  // copy1 did not start before it
  EXPECT_EQ(candidate.fake->calls().size(), 1u);
  candidate.fake->OpenGate();
  EXPECT_TRUE(copy_answer.get().ok());
  EXPECT_TRUE(waits_answer.get().ok());  // it ran once the demoted copy ended
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
  EXPECT_TRUE(quarantined().empty());
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
}

}  // namespace
}  // namespace inferd::scheduler
