// Models sharing the executors cannot hurt each other: fair picking between
// models, deadlines that hold while a batch runs, a hung batch given up and
// its executor replaced. Fake models held at their gates and a fake clock:
// no sleeps, no timing.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/fake/fake_backend.h"
#include "scheduler/scheduler.h"
#include "unit/scheduler/isolation_fixture.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/eventually.h"
#include "unit/support/fake_clock.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;
using Answer = IsolationTest::Answer;

// One executor, a heavy model with a backlog whose batches took 100 ms each,
// and a light model: the light request runs right after the batch that is
// running when it arrives, not after the heavy model's queue.
TEST_F(IsolationTest, ALightModelWaitsOnlyForTheRunningBatchNotABacklog) {
  StartScheduler(1);
  Model heavy = Add("heavy", Config(1));
  Model light = Add("light", Config(1));
  heavy.fake->CloseGate();
  std::vector<Answer> answers;
  answers.push_back(Submit(heavy, "h0"));
  heavy.fake->WaitForCalls(1);
  clock_.Advance(std::chrono::milliseconds(100));  // h0 takes 100 ms
  for (int i = 1; i <= 4; ++i) answers.push_back(Submit(heavy, "h" + std::to_string(i)));
  answers.push_back(Submit(light, "l0"));  // arrives last, behind four heavy requests
  heavy.fake->OpenGate();
  for (auto& a : answers) ASSERT_TRUE(a.get().ok());
  const auto o = order();
  ASSERT_EQ(o.size(), 6u);
  EXPECT_EQ(o[0], "h0");
  EXPECT_EQ(o[1], "l0") << "the light request waited behind the heavy model's backlog";
}

// Priority levels stay strict across models: lowest-priority work (as a
// mirror's) waits for every other model's work.
TEST_F(IsolationTest, ALowerPriorityLevelWaitsForOtherModels) {
  StartScheduler(1);
  Model a = Add("a", Config(1));
  Model low = Add("low", Config(1));
  a.fake->CloseGate();
  auto first = Submit(a, "a0");
  a.fake->WaitForCalls(1);
  auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
  InferenceRequest r;
  r.inputs = {{"x", FloatTensor({1, 2}, 1)}};
  r.priority = 9;
  ASSERT_TRUE(scheduler_
                  ->Enqueue(*low.queue, std::move(r),
                            [this, promise](StatusOr<InferenceResponse> res) {
                              {
                                std::lock_guard<std::mutex> lock(mu_);
                                order_.push_back("low");
                              }
                              promise->set_value(std::move(res));
                            })
                  .ok());
  auto second = Submit(a, "a1");
  a.fake->OpenGate();
  ASSERT_TRUE(first.get().ok());
  ASSERT_TRUE(second.get().ok());
  ASSERT_TRUE(promise->get_future().get().ok());
  EXPECT_EQ(order(), (std::vector<std::string>{"a0", "a1", "low"}));
}

// A request whose deadline passes while its batch runs is answered 504 then,
// and the batch's late result is dropped and counted.
TEST_F(IsolationTest, DeadlineHoldsWhileTheBatchRuns) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  m.fake->CloseGate();
  auto answer = Submit(m, "m0", clock_.Now() + std::chrono::milliseconds(200));
  m.fake->WaitForCalls(1);
  clock_.Advance(std::chrono::milliseconds(250));
  auto res = answer.get();  // answered while Execute is still held at the gate
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(res.status().message().find("while its batch was running"), std::string::npos);
  m.fake->OpenGate();
  EXPECT_TRUE(test_support::Eventually([&] { return Late("m") == 1; }));
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
}

// A batch that runs past max_execution_ms is given up: its request answered,
// the model quarantined and its queue refused, and a new executor thread
// serves the other models while the stuck one is still inside Execute.
TEST_F(IsolationTest, AHungBatchIsGivenUpAndItsExecutorReplaced) {
  StartScheduler(1);
  auto config = Config(1);
  config.max_execution_ms = 1000;
  Model hung = Add("hung", config);
  Model other = Add("other", Config(1));
  hung.fake->CloseGate();
  auto stuck = Submit(hung, "hung0");
  hung.fake->WaitForCalls(1);
  auto queued = Submit(hung, "hung1");
  auto waiting = Submit(other, "other0");  // no executor is free
  clock_.Advance(std::chrono::milliseconds(1001));
  auto res = stuck.get();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kInternal);
  EXPECT_NE(res.status().message().find("past max_execution_ms"), std::string::npos);
  auto refused = queued.get();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("quarantined"), std::string::npos);
  ASSERT_TRUE(waiting.get().ok());  // served by the replacement executor
  EXPECT_EQ(scheduler_->abandoned_executors(), 1);
  EXPECT_TRUE(test_support::Eventually([&] { return quarantined().size() == 1; }));
  EXPECT_NE(quarantined()[0].find("hung: its forward ran"), std::string::npos);
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));  // nothing outstanding
  hung.fake->OpenGate();  // the stuck forward returns at last: its thread leaves
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
  EXPECT_EQ(Late("hung"), 1);
  EXPECT_TRUE(Submit(other, "other1").get().ok());
}

// A batch whose every request was answered at its deadline while another
// model's request waits is given up at once, long before any limit: the
// waiting request is served by a replacement thread while the forward is
// still held. The model is not quarantined (one stuck thread, within its
// bound), and the stuck thread leaves when its forward returns.
TEST_F(IsolationTest, ABatchNobodyWaitsForGivesItsExecutorToWaitingWork) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  m.fake->CloseGate();
  auto expired = Submit(m, "m0", clock_.Now() + std::chrono::milliseconds(200));
  m.fake->WaitForCalls(1);
  auto waiting = Submit(other, "other0");  // the only executor is inside m0
  clock_.Advance(std::chrono::milliseconds(250));
  auto res = expired.get();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(waiting.get().ok());  // served while m0's forward is still held
  EXPECT_EQ(scheduler_->abandoned_executors(), 1);
  EXPECT_EQ(Unwaited(), 1);
  EXPECT_TRUE(quarantined().empty());
  m.fake->OpenGate();
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
}

// A batch nobody waits for keeps its executor while nothing else waits:
// there is nobody to give it to, and its thread would be one more stuck.
TEST_F(IsolationTest, ABatchNobodyWaitsForRunsOnWhenNothingElseWaits) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  m.fake->CloseGate();
  auto expired = Submit(m, "m0", clock_.Now() + std::chrono::milliseconds(200));
  m.fake->WaitForCalls(1);
  clock_.Advance(std::chrono::milliseconds(250));
  ASSERT_FALSE(expired.get().ok());
  EXPECT_EQ(scheduler_->abandoned_executors(), 0);
  Model other = Add("other", Config(1));
  auto waiting = Submit(other, "other0");  // now work waits: the batch is given up
  ASSERT_TRUE(waiting.get().ok());
  EXPECT_EQ(Unwaited(), 1);
  m.fake->OpenGate();
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
}

// Past the model's bound on stuck threads the model is quarantined, with
// the reason, and the requests queued for it are refused.
TEST_F(IsolationTest, PastItsBoundOnStuckThreadsAModelIsQuarantined) {
  StartScheduler(1, /*max_stuck_per_model=*/1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  m.fake->CloseGate();
  for (int round = 0; round < 2; ++round) {
    auto expired = Submit(m, "m", clock_.Now() + std::chrono::milliseconds(200));
    m.fake->WaitForCalls(round + 1);
    std::optional<Answer> queued;
    if (round == 1) queued = Submit(m, "queued", clock_.Now() + std::chrono::seconds(60));
    auto waiting = Submit(other, "other");
    clock_.Advance(std::chrono::milliseconds(250));
    ASSERT_FALSE(expired.get().ok());
    ASSERT_TRUE(waiting.get().ok()) << "round " << round;
    if (queued) {
      auto refused = queued->get();
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
      EXPECT_NE(refused.status().message().find("past the bound of 1"), std::string::npos)
          << refused.status().message();
    }
  }
  EXPECT_EQ(scheduler_->abandoned_executors(), 2);
  EXPECT_TRUE(test_support::Eventually([&] { return quarantined().size() == 1; }));
  EXPECT_NE(quarantined()[0].find("2 of its forwards still run"), std::string::npos);
  m.fake->OpenGate();
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
}

// At the node's bound on stuck threads a batch nobody waits for keeps its
// executor: the waiting request runs once the forward returns.
TEST_F(IsolationTest, AtTheNodesBoundABatchNobodyWaitsForKeepsItsExecutor) {
  StartScheduler(1, /*max_stuck_per_model=*/5, /*max_stuck_threads=*/1);
  Model m = Add("m", Config(1));
  Model other = Add("other", Config(1));
  m.fake->CloseGate();
  auto first = Submit(m, "m0", clock_.Now() + std::chrono::milliseconds(200));
  m.fake->WaitForCalls(1);
  auto served = Submit(other, "other0");
  clock_.Advance(std::chrono::milliseconds(250));
  ASSERT_FALSE(first.get().ok());
  ASSERT_TRUE(served.get().ok());
  auto second = Submit(m, "m1", clock_.Now() + std::chrono::milliseconds(200));
  m.fake->WaitForCalls(2);
  auto waiting = Submit(other, "other1");
  clock_.Advance(std::chrono::milliseconds(250));
  ASSERT_FALSE(second.get().ok());  // the watchdog chose before it answered
  EXPECT_NE(waiting.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(scheduler_->abandoned_executors(), 1);
  EXPECT_EQ(Unwaited(), 1);
  m.fake->OpenGate();
  ASSERT_TRUE(waiting.get().ok());
  EXPECT_TRUE(test_support::Eventually([&] { return scheduler_->abandoned_executors() == 0; }));
}

// Heavy batches yield: a model whose batches cost 20 ms or more forms
// single-item batches while another model's client is active (a request in
// the last second), so that the neighbour waits for one item's forward; with
// no neighbour active it batches again.
TEST_F(IsolationTest, AHeavyModelFormsSingleItemBatchesWhileANeighbourIsActive) {
  StartScheduler(1);
  Model heavy = Add("heavy", Config(8));
  Model light = Add("light", Config(1));
  auto batch_sizes = [&] {
    std::vector<int64_t> sizes;
    for (const auto& call : heavy.fake->calls()) sizes.push_back(call[0].tensor.shape()[0]);
    return sizes;
  };
  heavy.fake->CloseGate();
  std::vector<Answer> answers;
  answers.push_back(Submit(heavy, "h0"));
  heavy.fake->WaitForCalls(1);
  clock_.Advance(std::chrono::milliseconds(100));  // h0's batch costs 100 ms: heavy
  for (int i = 1; i <= 4; ++i) answers.push_back(Submit(heavy, "h" + std::to_string(i)));
  answers.push_back(Submit(light, "l0"));
  heavy.fake->OpenGate();
  for (auto& a : answers) ASSERT_TRUE(a.get().ok());
  EXPECT_EQ(batch_sizes(), (std::vector<int64_t>{1, 1, 1, 1, 1}))
      << "the light model's client is active: single items";
  // Two seconds without a request of the light model: batches again.
  clock_.Advance(std::chrono::seconds(2));
  heavy.fake->CloseGate();
  answers.clear();
  answers.push_back(Submit(heavy, "h5"));
  heavy.fake->WaitForCalls(6);
  clock_.Advance(std::chrono::milliseconds(100));  // still heavy
  for (int i = 6; i <= 9; ++i) answers.push_back(Submit(heavy, "h" + std::to_string(i)));
  heavy.fake->OpenGate();
  for (auto& a : answers) ASSERT_TRUE(a.get().ok());
  EXPECT_EQ(batch_sizes().back(), 4) << "alone, the queued four form one batch";
}

}  // namespace
}  // namespace inferd::scheduler
