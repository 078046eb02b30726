// The end of a drain whose grace is over (issue 36's CI failure): every
// request still queued or running is answered at once with the status given,
// so that the HTTP and gRPC ports close on answers written instead of on
// clients still waiting; the batch still running is not waited for, and its
// late result is dropped. Fake models held at their gates: no sleeps.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "unit/scheduler/isolation_fixture.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using DrainTest = IsolationTest;

TEST_F(DrainTest, AtTheGracesEndEveryUnfinishedRequestIsAnswered) {
  StartScheduler(1);
  Model m = Add("m", Config(1));
  m.fake->CloseGate();
  auto running = Submit(m, "running");
  m.fake->WaitForCalls(1);  // holds the only executor
  auto queued = Submit(m, "queued");
  scheduler_->StopAccepting();
  EXPECT_FALSE(scheduler_->WaitIdle(clock_.Now()));
  EXPECT_EQ(scheduler_->AnswerUnfinished(Unavailable("shutting down")), 2u);
  for (auto* a : {&running, &queued}) {
    ASSERT_EQ(a->wait_for(std::chrono::seconds(0)), std::future_status::ready);
    auto res = a->get();
    ASSERT_FALSE(res.ok());
    EXPECT_EQ(res.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(res.status().message(), "shutting down");
  }
  EXPECT_EQ(scheduler_->QueueDepth(*m.queue), 0u);
  EXPECT_EQ(scheduler_->AnswerUnfinished(Unavailable("again")), 1u) << "still running: told again";
  m.fake->OpenGate();  // its result comes late: dropped, nothing answered twice
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_EQ(scheduler_->AnswerUnfinished(Unavailable("none")), 0u);
}

}  // namespace
}  // namespace inferd::scheduler
