// Mirror with a candidate the test answers by hand: which requests are
// picked, what is dropped past max_in_flight, and how answers are counted.
#include "mirror/mirror.h"

#include <gtest/gtest.h>

#include <cstring>

#include "unit/support/fake_clock.h"

namespace inferd::mirror {
namespace {

class HandCandidate : public Candidate {
 public:
  const char* kind() const override { return "local"; }
  void Send(const scheduler::InferenceRequest& request, TimePoint,
            CandidateDone done) override {
    sent.push_back(request);
    pending.push_back(std::move(done));
  }
  std::vector<scheduler::InferenceRequest> sent;
  std::vector<CandidateDone> pending;
};

std::vector<NamedTensor> Logits(std::vector<float> v) {
  Tensor t = Tensor::Allocate(DataType::kFp32, {1, static_cast<int64_t>(v.size())});
  std::memcpy(t.mutable_data(), v.data(), v.size() * sizeof(float));
  return {{"logits", t}};
}

scheduler::InferenceResponse Answer(std::vector<float> v) {
  scheduler::InferenceResponse r;
  r.outputs = Logits(std::move(v));
  return r;
}

class MirrorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Mirror> Make(double fraction, int max_in_flight, Clock* clock = nullptr) {
    Mirror::Options o;
    if (clock) o.clock = clock;
    o.model = "primary";
    o.config.to = "candidate";
    o.config.fraction = fraction;
    o.config.max_in_flight = max_in_flight;
    o.metrics = &registry_;
    return std::move(*Mirror::Create(o, candidate_));
  }
  // Taps one request and answers the primary with `v`; returns whether the
  // client got its answer.
  bool RunPrimary(Mirror& m, std::vector<float> v, std::string id = "") {
    scheduler::InferenceRequest request;
    request.id = std::move(id);
    request.inputs = Logits({1, 2});
    bool answered = false;
    auto done = m.Tap(request, [&](StatusOr<scheduler::InferenceResponse> r) {
      answered = r.ok();
    });
    done(Answer(std::move(v)));
    return answered;
  }

  metrics::Registry registry_;
  std::shared_ptr<HandCandidate> candidate_ = std::make_shared<HandCandidate>();
};

TEST(Picked, PicksExactlyTheFractionEvenlySpread) {
  int picked = 0;
  for (uint64_t n = 0; n < 1000; ++n) picked += Picked(n, 0.1);
  EXPECT_EQ(picked, 100);
  EXPECT_FALSE(Picked(0, 0.1));
  EXPECT_TRUE(Picked(9, 0.1));
  EXPECT_FALSE(Picked(10, 0.1));
  EXPECT_TRUE(Picked(0, 1.0));
  EXPECT_FALSE(Picked(12345, 0.0));
  picked = 0;
  for (uint64_t n = 0; n < 300; ++n) picked += Picked(n, 1.0 / 3);
  EXPECT_EQ(picked, 100);
}

TEST_F(MirrorTest, TheClientIsAnsweredBeforeTheCandidateIsAsked) {
  auto m = Make(1.0, 4);
  EXPECT_TRUE(RunPrimary(*m, {1, 2, 3}, "r1"));
  ASSERT_EQ(candidate_->sent.size(), 1u);
  EXPECT_EQ(candidate_->sent[0].priority, scheduler::kSparePriority);
  EXPECT_EQ(candidate_->sent[0].id, "r1");
  EXPECT_EQ(m->Report().in_flight, 1);
  candidate_->pending[0](Logits({1, 2, 2.5f}));
  MirrorReport r = m->Report();
  EXPECT_EQ(r.mirrored, 1);
  EXPECT_EQ(r.comparison.compared, 1);
  EXPECT_EQ(r.in_flight, 0);
  EXPECT_DOUBLE_EQ(r.comparison.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(*r.comparison.top1_agreement, 1.0);
  ASSERT_EQ(r.comparison.top_disagreements.size(), 1u);
  EXPECT_EQ(r.comparison.top_disagreements[0].input.id, "r1");
  const std::string text = registry_.RenderPrometheus();
  EXPECT_NE(text.find(R"(inferd_mirror_requests_total{model="primary",outcome="compared"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(inferd_mirror_max_abs_error{model="primary"} 0.5)"), std::string::npos);
  EXPECT_NE(text.find(R"(inferd_mirror_latency_seconds_count{model="primary",side="candidate"} 1)"),
            std::string::npos);
}

TEST_F(MirrorTest, OnlyTheFractionIsMirrored) {
  auto m = Make(0.25, 100);
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(RunPrimary(*m, {1, 2}));
  EXPECT_EQ(candidate_->sent.size(), 10u);
  EXPECT_EQ(m->Report().seen, 40);
}

TEST_F(MirrorTest, PicksPastMaxInFlightAreDroppedAndCounted) {
  auto m = Make(1.0, 2);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(RunPrimary(*m, {1, 2}));  // every client answered
  EXPECT_EQ(candidate_->sent.size(), 2u);
  MirrorReport r = m->Report();
  EXPECT_EQ(r.mirrored, 2);
  EXPECT_EQ(r.dropped, 3);
  EXPECT_EQ(r.in_flight, 2);
  candidate_->pending[0](Logits({1, 2}));  // one answer frees a place
  EXPECT_TRUE(RunPrimary(*m, {1, 2}));
  EXPECT_EQ(candidate_->sent.size(), 3u);
  EXPECT_NE(registry_.RenderPrometheus().find(
                R"(inferd_mirror_requests_total{model="primary",outcome="dropped"} 3)"),
            std::string::npos);
}

TEST_F(MirrorTest, CandidateErrorsAndTimeoutsAreCountedApart) {
  auto m = Make(1.0, 8);
  for (int i = 0; i < 3; ++i) RunPrimary(*m, {1, 2});
  candidate_->pending[0](DeadlineExceeded("late"));
  candidate_->pending[1](Internal("boom"));
  candidate_->pending[2](Logits({1, 2, 3}));  // another shape: mismatched
  MirrorReport r = m->Report();
  EXPECT_EQ(r.candidate_timeouts, 1);
  EXPECT_EQ(r.candidate_errors, 1);
  EXPECT_EQ(r.comparison.compared, 0);
  EXPECT_EQ(r.comparison.mismatched, 1);
  EXPECT_NE(r.last_candidate_error.find("FP32[1,3]"), std::string::npos);
  EXPECT_EQ(r.in_flight, 0);
}

TEST_F(MirrorTest, APrimaryErrorSendsNothing) {
  auto m = Make(1.0, 8);
  scheduler::InferenceRequest request;
  bool called = false;
  m->Tap(request, [&](StatusOr<scheduler::InferenceResponse> r) {
    called = true;
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  })(Internal("primary failed"));
  EXPECT_TRUE(called);
  EXPECT_TRUE(candidate_->sent.empty());
  EXPECT_EQ(m->Report().primary_errors, 1);
  EXPECT_EQ(m->Report().in_flight, 0);
}

TEST_F(MirrorTest, AnAnswerAfterTheMirrorIsGoneIsHarmless) {
  auto m = Make(1.0, 8);
  RunPrimary(*m, {1, 2});
  auto late = std::move(candidate_->pending[0]);
  m.reset();
  late(Logits({1, 2}));  // must not crash
}

TEST_F(MirrorTest, BadConfigsAreRefused) {
  Mirror::Options o;
  o.model = "primary";
  o.config.to = "candidate";
  o.config.fraction = 1.5;
  EXPECT_EQ(Mirror::Create(o, candidate_).status().code(), StatusCode::kInvalidArgument);
  o.config.fraction = 0.5;
  o.config.max_in_flight = 0;
  EXPECT_EQ(Mirror::Create(o, candidate_).status().code(), StatusCode::kInvalidArgument);
}

// A candidate 20 times slower than its primary (whose latency counts as at
// least 5 ms) keeps 4/20 of the picks once three pairs were measured; the
// rest are counted as sampled down.
TEST_F(MirrorTest, ACandidateMuchSlowerThanItsPrimaryIsSampledDown) {
  test_support::FakeClock clock;
  auto m = Make(1.0, 64, &clock);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(RunPrimary(*m, {1, 2}));
    clock.Advance(std::chrono::milliseconds(100));
    candidate_->pending.back()(Logits({1, 2}));
  }
  MirrorReport r = m->Report();
  EXPECT_DOUBLE_EQ(r.candidate_slowdown, 20);
  EXPECT_DOUBLE_EQ(r.effective_fraction, 0.2);
  EXPECT_EQ(r.sampled_down, 0);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(RunPrimary(*m, {1, 2}));
  r = m->Report();
  EXPECT_EQ(r.mirrored, 3 + 2);
  EXPECT_EQ(r.sampled_down, 8);
  EXPECT_EQ(r.seen, 13);
}

// A candidate as fast as a primary of a few ms is never sampled down.
TEST_F(MirrorTest, AFastCandidateIsNotSampledDown) {
  test_support::FakeClock clock;
  auto m = Make(1.0, 64, &clock);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(RunPrimary(*m, {1, 2}));
    clock.Advance(std::chrono::milliseconds(15));  // 3x the 5 ms floor
    candidate_->pending.back()(Logits({1, 2}));
  }
  EXPECT_DOUBLE_EQ(m->Report().effective_fraction, 1.0);
  EXPECT_EQ(m->Report().mirrored, 5);
}

// A copy the scheduler refused for want of a spare executor is counted as
// such, not as a candidate error.
TEST_F(MirrorTest, ACopyRefusedForWantOfASpareExecutorIsCounted) {
  auto m = Make(1.0, 4);
  ASSERT_TRUE(RunPrimary(*m, {1, 2}));
  candidate_->pending[0](ResourceExhausted(scheduler::kNoSpareExecutor));
  MirrorReport r = m->Report();
  EXPECT_EQ(r.no_spare_executor, 1);
  EXPECT_EQ(r.candidate_errors, 0);
  EXPECT_EQ(r.in_flight, 0);
}

}  // namespace
}  // namespace inferd::mirror
