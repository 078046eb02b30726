#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <future>
#include <thread>
#include <map>

#include "backend/fake/fake_backend.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/eventually.h"
#include "unit/support/fake_clock.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;
using testing::Floats;

using test_support::FakeClock;

class SchedulerTest : public ::testing::Test {
 protected:
  void Start(config::ModelConfig config, int executors = 1, int max_concurrency = 0) {
    Scheduler::Options opts;
    opts.executors.assign(static_cast<size_t>(executors), ExecutorSpec{});
    opts.clock = &clock_;
    opts.metrics = &registry_;
    opts.calibrate = false;  // batch formation as configured (calibration: its own tests)
    opts.max_queue_bytes = max_queue_bytes_;
    opts.backend = backend_;
    auto s = Scheduler::Create(opts);
    ASSERT_TRUE(s.ok());
    scheduler_ = std::move(*s);
    model_ = std::make_shared<backend::FakeModel>(config);
    ModelSpec spec;
    spec.name = "m:1";
    spec.version = "1";
    spec.config = config;
    spec.model = model_;
    spec.max_concurrency = max_concurrency;
    queue_ = scheduler_->AddModel(std::move(spec));
  }

  std::future<StatusOr<InferenceResponse>> Submit(float start, int64_t items = 1,
                                                  TimePoint deadline = TimePoint::max(),
                                                  Status* enqueue_status = nullptr) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    auto future = promise->get_future();
    InferenceRequest r;
    r.inputs = {{"x", FloatTensor({items, 2}, start)}};
    r.deadline = deadline;
    Status st = scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    });
    if (enqueue_status) *enqueue_status = st;
    if (!st.ok()) promise->set_value(st);
    return future;
  }

  FakeClock clock_;
  size_t max_queue_bytes_ = 0;
  backend::Backend* backend_ = nullptr;
  metrics::Registry registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::shared_ptr<backend::FakeModel> model_;
  std::shared_ptr<ScheduledModel> queue_;
};

TEST_F(SchedulerTest, AnswersEachRequestWithItsOwnOutput) {
  Start(Config(8));
  auto f = Submit(5);
  auto res = f.get();
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  ASSERT_EQ(res->outputs.size(), 1u);
  EXPECT_EQ(res->outputs[0].name, "y");
  EXPECT_EQ(Floats(res->outputs[0].tensor), (std::vector<float>{5, 6}));
}

TEST_F(SchedulerTest, RequestsQueuedWhileBusyRunAsOneBatch) {
  Start(Config(8));
  model_->CloseGate();
  auto first = Submit(0);
  model_->WaitForCalls(1);
  std::vector<std::future<StatusOr<InferenceResponse>>> rest;
  for (int i = 1; i <= 4; ++i) rest.push_back(Submit(static_cast<float>(i * 10)));
  model_->OpenGate();
  ASSERT_TRUE(first.get().ok());
  for (int i = 0; i < 4; ++i) {
    auto res = rest[static_cast<size_t>(i)].get();
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->batch_size, 4);
    const float start = static_cast<float>((i + 1) * 10);
    EXPECT_EQ(Floats(res->outputs[0].tensor), (std::vector<float>{start, start + 1}));
  }
  EXPECT_EQ(model_->batch_sizes(), (std::vector<int64_t>{1, 4}));
  auto& hist = registry_.GetHistogram("inferd_batch_size", "", {{"model", "m"}, {"version", "1"}},
                                      metrics::BatchSizeBuckets());
  EXPECT_EQ(hist.count(), 2u);
  EXPECT_EQ(hist.sum(), 5);
}

TEST_F(SchedulerTest, GroupsCutByLengthGoBackToTheQueueAndRunWithLaterArrivals) {
  config::ModelConfig c = Config(8, 0, {-1});
  c.inputs[0].pad_value = 0;
  c.outputs[0].dims = {-1};
  Start(c);
  auto submit = [&](int64_t length, float start) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    auto future = promise->get_future();
    InferenceRequest r;
    r.inputs = {{"x", FloatTensor({1, length}, start)}};
    EXPECT_TRUE(scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    }).ok());
    return future;
  };
  model_->CloseGate();
  auto a = submit(2, 0);
  model_->WaitForCalls(1);
  // Queued behind it: the long one first. DefaultLengthCost cuts the batch
  // into {40} (the oldest's group, run first) and {2, 3}, given back.
  auto c40 = submit(40, 100);
  auto d = submit(2, 200);
  auto e = submit(3, 300);
  model_->CloseGateAt(2);
  model_->OpenGate();
  model_->WaitForCalls(2);  // the 40-token forward runs; 2 and 3 are queued
  auto f = submit(2, 400);  // arrives meanwhile: it joins them
  model_->OpenGate();
  for (auto* fut : {&a, &c40, &d, &e, &f}) {
    auto res = fut->get();
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    const float first = Floats(res->outputs[0].tensor)[0];
    EXPECT_EQ(std::fmod(first, 100.0f), 0.0f) << "its own row";
  }
  EXPECT_EQ(model_->batch_sizes(), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(model_->calls()[2][0].tensor.shape(), (Shape{3, 3}));
  auto& depth = registry_.GetGauge("inferd_queue_depth", "", {{"model", "m"}, {"version", "1"}});
  EXPECT_EQ(depth.value(), 0);
  // Items per forward: the texts given back are counted once, when they run.
  auto& hist = registry_.GetHistogram("inferd_batch_size", "", {{"model", "m"}, {"version", "1"}},
                                      metrics::BatchSizeBuckets());
  EXPECT_EQ(hist.count(), 3u);
  EXPECT_EQ(hist.sum(), 5);
}

TEST_F(SchedulerTest, ModelFailureAnswersTheBatchAndServingGoesOn) {
  Start(Config(8));
  model_->FailWith(Internal("forward() threw: boom"));
  auto res = Submit(0).get();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kInternal);
  EXPECT_NE(res.status().message().find("model 'm:1': forward() threw: boom"), std::string::npos);
  model_->FailWith(Status::Ok());
  EXPECT_TRUE(Submit(0).get().ok());
}

TEST_F(SchedulerTest, AHookThatThrowsAnswers500AndTheExecutorLivesOn) {
  Scheduler::Options opts;
  opts.executors.assign(1, ExecutorSpec{});
  opts.clock = &clock_;
  opts.calibrate = false;
  scheduler_ = std::move(*Scheduler::Create(opts));
  auto config = Config(8);
  config.preprocess.kind = config::PreprocessKind::kImage;  // raw payloads are accepted
  ModelSpec spec;
  spec.name = "m:1";
  spec.config = config;
  spec.model = std::make_shared<backend::FakeModel>(config);
  spec.hooks.preprocess = [](InferenceRequest& r) -> Status {
    if (r.raw[0].bytes == "throw") throw std::bad_alloc();
    r.inputs = {{"x", FloatTensor({1, 2}, 7)}};
    return Status::Ok();
  };
  queue_ = scheduler_->AddModel(std::move(spec));
  auto submit = [&](const std::string& body) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    InferenceRequest r;
    r.raw.push_back({"image/jpeg", body});
    EXPECT_TRUE(scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    }).ok());
    return promise->get_future().get();
  };
  auto failed = submit("throw");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal);
  EXPECT_NE(failed.status().message().find("pre-processing threw: out of memory"),
            std::string::npos);
  auto next = submit("fine");  // the same (only) executor serves on
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(Floats(next->outputs[0].tensor), (std::vector<float>{7, 8}));
}

TEST_F(SchedulerTest, RequestsQueuedWhileABatchIsPreprocessedJoinIt) {
  Scheduler::Options opts;
  opts.executors.assign(1, ExecutorSpec{});
  opts.clock = &clock_;
  opts.metrics = &registry_;
  opts.calibrate = false;
  scheduler_ = std::move(*Scheduler::Create(opts));
  auto config = Config(8, 1'000'000);  // a delay that the fake clock never reaches
  config.preprocess.kind = config::PreprocessKind::kImage;
  model_ = std::make_shared<backend::FakeModel>(config);
  // The first pre-processing call holds until the test has queued three more.
  std::promise<void> entered, release;
  auto released = release.get_future().share();
  std::atomic<int> calls{0};
  ModelSpec spec;
  spec.name = "m:1";
  spec.version = "1";
  spec.config = config;
  spec.model = model_;
  spec.hooks.preprocess = [&](InferenceRequest& r) -> Status {
    if (calls++ == 0) {
      entered.set_value();
      released.wait();
    }
    r.inputs = {{"x", FloatTensor({1, 2}, std::stof(r.raw[0].bytes))}};
    r.raw.clear();
    return Status::Ok();
  };
  queue_ = scheduler_->AddModel(std::move(spec));
  std::vector<std::future<StatusOr<InferenceResponse>>> answers;
  auto submit = [&](const std::string& body) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    answers.push_back(promise->get_future());
    InferenceRequest r;
    r.raw.push_back({"image/jpeg", body});
    ASSERT_TRUE(scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    }).ok());
  };
  submit("0");
  entered.get_future().wait();  // the batch of one has started without waiting for the delay
  for (int i = 1; i <= 3; ++i) submit(std::to_string(i * 10));
  release.set_value();
  for (size_t i = 0; i < answers.size(); ++i) {
    auto res = answers[i].get();
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->batch_size, 4);
    const float start = static_cast<float>(i * 10);
    EXPECT_EQ(Floats(res->outputs[0].tensor), (std::vector<float>{start, start + 1}));
  }
  EXPECT_EQ(model_->batch_sizes(), (std::vector<int64_t>{4}));
  auto& hist = registry_.GetHistogram("inferd_batch_size", "", {{"model", "m"}, {"version", "1"}},
                                      metrics::BatchSizeBuckets());
  EXPECT_EQ(hist.count(), 1u);
  EXPECT_EQ(hist.sum(), 4);
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_EQ(scheduler_->HeldBytes(), 0u) << "the joined requests' bytes are given back";
}

TEST_F(SchedulerTest, CalibrationAtAddModelCapsTheBatches) {
  Scheduler::Options opts;
  opts.executors.assign(1, ExecutorSpec{});
  opts.clock = &clock_;
  opts.metrics = &registry_;
  auto config = Config(8);
  model_ = std::make_shared<backend::FakeModel>(config);
  // Per item: 3 ms at batch 1, 2 ms at batch 2, 2.5 ms at 4 and 8: batch 2 pays.
  const std::map<int, double> cost = {{1, 3}, {2, 4}, {4, 10}, {8, 20}};
  opts.calibration.timer = [model = model_, cost](const std::function<void()>& call) {
    call();
    return cost.at(static_cast<int>(model->batch_sizes().back()));
  };
  scheduler_ = std::move(*Scheduler::Create(opts));
  ModelSpec spec;
  spec.name = "m:1";
  spec.version = "1";
  spec.config = config;
  spec.model = model_;
  queue_ = scheduler_->AddModel(std::move(spec));  // returns once calibrated
  const BatchCalibration c = scheduler_->GetCalibration(*queue_);
  ASSERT_TRUE(c.calibrated) << c.note;
  EXPECT_EQ(c.max_batch, 2);
  EXPECT_EQ(c.chosen_sizes(), (std::vector<int>{1, 2}));
  EXPECT_EQ(registry_.GetGauge("inferd_batch_size_limit", "", {{"model", "m"}, {"version", "1"}})
                .value(),
            2);
  EXPECT_EQ(registry_
                .GetGauge("inferd_batch_calibration_seconds", "",
                          {{"model", "m"}, {"version", "1"}, {"batch_size", "4"}, {"chosen", "false"}})
                .value(),
            0.010);
  // 6 requests queued behind a running one run in batches of 2, not 6.
  const size_t calibration_calls = model_->batch_sizes().size();
  model_->CloseGate();
  auto first = Submit(0);
  model_->WaitForCalls(calibration_calls + 1);
  std::vector<std::future<StatusOr<InferenceResponse>>> rest;
  for (int i = 1; i <= 6; ++i) rest.push_back(Submit(static_cast<float>(i)));
  model_->OpenGate();
  ASSERT_TRUE(first.get().ok());
  for (auto& f : rest) {
    auto res = f.get();
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->batch_size, 2);
  }
  const auto sizes = model_->batch_sizes();
  EXPECT_EQ(std::vector<int64_t>(sizes.begin() + static_cast<long>(calibration_calls), sizes.end()),
            (std::vector<int64_t>{1, 2, 2, 2}));
}

TEST_F(SchedulerTest, FullQueueIsRefusedAtOnce) {
  auto c = Config(1);
  c.max_queue_size = 2;
  Start(c);
  model_->CloseGate();
  auto running = Submit(0);
  model_->WaitForCalls(1);
  auto q1 = Submit(1);
  auto q2 = Submit(2);
  Status st;
  auto refused = Submit(3, 1, TimePoint::max(), &st);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(scheduler_->QueueDepth(*queue_), 2u);
  EXPECT_EQ(registry_.GetGauge("inferd_queue_depth", "", {{"model", "m"}, {"version", "1"}}).value(), 2);
  EXPECT_EQ(registry_
                .GetCounter("inferd_rejected_total", "", {{"model", "m"}, {"version", "1"}, {"reason", "queue_full"}})
                .value(),
            1);
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(q1.get().ok());
  EXPECT_TRUE(q2.get().ok());
}

// A request of n items holds 8n bytes ({n, 2} floats).
TEST_F(SchedulerTest, BytesPastMaxQueueBytesAreRefused503UntilTheyAreAnswered) {
  max_queue_bytes_ = 24;
  Start(Config(4));
  model_->CloseGate();
  auto running = Submit(0);  // running bytes count too: they are still in memory
  model_->WaitForCalls(1);
  auto queued = Submit(1, 2);
  EXPECT_EQ(scheduler_->HeldBytes(), 24u);
  Status st;
  auto refused = Submit(2, 1, TimePoint::max(), &st);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("--max-queue-bytes 24"), std::string::npos) << st.message();
  EXPECT_EQ(registry_
                .GetCounter("inferd_rejected_total", "",
                            {{"model", "m"}, {"version", "1"}, {"reason", "queue_bytes"}})
                .value(),
            1);
  EXPECT_EQ(registry_.GetGauge("inferd_queue_bytes", "", {}).value(), 24);
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(queued.get().ok());
  ASSERT_TRUE(scheduler_->WaitIdle(clock_.Now() + std::chrono::seconds(10)));
  EXPECT_EQ(scheduler_->HeldBytes(), 0u);
  auto again = Submit(3, 3);  // 24 bytes: exactly the limit
  EXPECT_TRUE(again.get().ok());
}

TEST_F(SchedulerTest, ExpiredAndCancelledRequestsGiveTheirBytesBack) {
  max_queue_bytes_ = 1000;
  Start(Config(1));
  model_->CloseGate();
  auto running = Submit(0);
  model_->WaitForCalls(1);
  auto expiring = Submit(1, 1, clock_.Now() + std::chrono::milliseconds(5));
  EXPECT_EQ(scheduler_->HeldBytes(), 16u);
  clock_.now_us += 10'000;
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  EXPECT_EQ(expiring.get().status().code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(scheduler_->WaitIdle(clock_.Now() + std::chrono::seconds(10)));
  EXPECT_EQ(scheduler_->HeldBytes(), 0u);
}

TEST_F(SchedulerTest, ExpiredRequestIsDroppedBeforeCompute) {
  Start(Config(1));
  model_->CloseGate();
  auto running = Submit(0);
  model_->WaitForCalls(1);
  auto late = Submit(1, 1, clock_.Now() + std::chrono::milliseconds(10));
  clock_.now_us += 20'000;
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  auto res = late.get();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(model_->calls().size(), 1u) << "the expired request never reached the model";
  EXPECT_EQ(registry_
                .GetCounter("inferd_rejected_total", "", {{"model", "m"}, {"version", "1"}, {"reason", "deadline"}})
                .value(),
            1);
}

TEST_F(SchedulerTest, ConfigTimeoutIsTheDefaultDeadline) {
  auto c = Config(1);
  c.request_timeout_ms = 50;
  Start(c);
  model_->CloseGate();
  // Its own deadline, far off: the clock passes the 50 ms default while it
  // runs, and a running request past its deadline is answered 504 by the
  // watchdog (issue 24), which would race the gate opening.
  auto running = Submit(0, 1, clock_.Now() + std::chrono::seconds(10));
  model_->WaitForCalls(1);
  auto queued = Submit(1);  // no per-request deadline
  clock_.now_us += 49'000;
  auto in_time = Submit(2);
  clock_.now_us += 2'000;  // 51 ms after `queued`, 2 ms after `in_time`
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  EXPECT_EQ(queued.get().status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(in_time.get().ok());
}

TEST_F(SchedulerTest, BadRequestIsRefusedWithoutReachingTheModel) {
  Start(Config(8));
  InferenceRequest r;
  r.inputs = {{"x", FloatTensor({1, 3})}};
  Status st = scheduler_->Enqueue(*queue_, std::move(r), [](StatusOr<InferenceResponse>) {
    ADD_FAILURE() << "completion must not run for a refused request";
  });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(model_->calls().empty());
}

// Enqueue moves from the request and its completion only when it queues
// them: after any refusal the caller still has both, as they were, and may
// queue them elsewhere (ServedModel hands them to a reloaded version's
// replacement).
TEST_F(SchedulerTest, ARefusedRequestAndItsCompletionStayWithTheCaller) {
  auto c = Config(1);
  c.max_queue_size = 1;
  max_queue_bytes_ = 30;  // a request {1, 2} holds 8 bytes, plus its id
  Start(c);
  model_->CloseGate();
  auto running = Submit(0);
  model_->WaitForCalls(1);
  auto queued = Submit(1);  // queue_ is full; 16 bytes held

  auto answer = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
  InferenceRequest r;
  r.id = "kept";  // 12 bytes in all
  r.inputs = {{"x", FloatTensor({1, 2}, 5)}};
  Completion done = [answer](StatusOr<InferenceResponse> res) { answer->set_value(std::move(res)); };
  auto expect_kept = [&](const Status& st, StatusCode code, const std::string& why) {
    EXPECT_EQ(st.code(), code) << why << ": " << st.ToString();
    EXPECT_EQ(r.id, "kept") << why;
    ASSERT_EQ(r.inputs.size(), 1u) << why;
    EXPECT_EQ(Floats(r.inputs[0].tensor), (std::vector<float>{5, 6})) << why;
    EXPECT_EQ(r.deadline, TimePoint::max()) << why << ": the next queue sets it";
    EXPECT_TRUE(static_cast<bool>(done)) << why;
  };
  expect_kept(scheduler_->Enqueue(*queue_, std::move(r), std::move(done)),
              StatusCode::kResourceExhausted, "queue full");

  ModelSpec spec;
  spec.name = "m:2";
  spec.version = "2";
  spec.config = c;
  spec.model = model_;
  auto other = scheduler_->AddModel(spec);
  // Another model's request fills the bytes.
  auto other_promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
  InferenceRequest o;
  o.inputs = {{"x", FloatTensor({1, 2}, 7)}};
  ASSERT_TRUE(scheduler_
                  ->Enqueue(*other, std::move(o),
                            [other_promise](StatusOr<InferenceResponse> res) {
                              other_promise->set_value(std::move(res));
                            })
                  .ok());  // 24 bytes held: `r` would make 36
  expect_kept(scheduler_->Enqueue(*other, std::move(r), std::move(done)), StatusCode::kUnavailable,
              "max_queue_bytes");

  spec.name = "m:3";
  spec.version = "3";
  auto removed = scheduler_->AddModel(spec);
  scheduler_->RemoveModel(removed);
  expect_kept(scheduler_->Enqueue(*removed, std::move(r), std::move(done)),
              StatusCode::kUnavailable, "model removed");

  InferenceRequest bad;
  bad.id = "bad";
  bad.inputs = {{"x", FloatTensor({1, 3}, 1)}};
  Completion bad_done = [](StatusOr<InferenceResponse>) { ADD_FAILURE() << "refused"; };
  EXPECT_EQ(scheduler_->Enqueue(*queue_, std::move(bad), std::move(bad_done)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.id, "bad");
  ASSERT_EQ(bad.inputs.size(), 1u);
  EXPECT_EQ(bad.inputs[0].tensor.shape(), (Shape{1, 3}));
  EXPECT_TRUE(static_cast<bool>(bad_done));

  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(queued.get().ok());
  EXPECT_TRUE(other_promise->get_future().get().ok());
  ASSERT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  // Queued at last, and answered through the completion it kept.
  ASSERT_TRUE(scheduler_->Enqueue(*queue_, std::move(r), std::move(done)).ok());
  auto res = answer->get_future().get();
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->id, "kept");
  EXPECT_EQ(Floats(res->outputs[0].tensor), (std::vector<float>{5, 6}));

  scheduler_->StopAccepting();
  InferenceRequest late;
  late.id = "late";
  late.inputs = {{"x", FloatTensor({1, 2}, 1)}};
  Completion late_done = [](StatusOr<InferenceResponse>) { ADD_FAILURE() << "refused"; };
  EXPECT_EQ(scheduler_->Enqueue(*queue_, std::move(late), std::move(late_done)).code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(late.id, "late");
  EXPECT_EQ(late.inputs.size(), 1u);
  EXPECT_EQ(late.deadline, TimePoint::max());
  EXPECT_TRUE(static_cast<bool>(late_done));
}

TEST_F(SchedulerTest, DrainFinishesAcceptedWorkAndRefusesNew) {
  Start(Config(1));
  model_->CloseGate();
  auto running = Submit(0);
  model_->WaitForCalls(1);
  auto queued = Submit(1);
  scheduler_->StopAccepting();
  Status st;
  Submit(9, 1, TimePoint::max(), &st);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(scheduler_->WaitIdle(clock_.Now())) << "work is still queued";
  model_->OpenGate();
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(queued.get().ok());
}

TEST_F(SchedulerTest, ExecutorsRunOneModelConcurrentlyUpToItsCap) {
  Start(Config(1), /*executors=*/2, /*max_concurrency=*/2);
  model_->CloseGate();
  auto a = Submit(0);
  auto b = Submit(1);
  model_->WaitForCalls(2);  // both executors run the model at once
  EXPECT_EQ(model_->max_concurrent(), 2);
  model_->OpenGate();
  EXPECT_TRUE(a.get().ok());
  EXPECT_TRUE(b.get().ok());
}

TEST_F(SchedulerTest, ConcurrencyCapOfOneSerializes) {
  auto c = Config(1);
  c.max_queue_size = 64;
  Start(c, /*executors=*/2, /*max_concurrency=*/1);
  std::vector<std::future<StatusOr<InferenceResponse>>> fs;
  for (int i = 0; i < 20; ++i) fs.push_back(Submit(static_cast<float>(i)));
  for (auto& f : fs) EXPECT_TRUE(f.get().ok());
  EXPECT_EQ(model_->max_concurrent(), 1);
}

// Counts executor set-ups, and those that found the thread set up already.
class SetUpCountingBackend : public backend::FakeBackend {
 public:
  void InitExecutorThread(const std::vector<int>&, int) override {
    static thread_local bool set_up = false;
    if (set_up) ++again_;
    set_up = true;
    ++set_ups_;
  }
  std::atomic<int> set_ups_{0};
  std::atomic<int> again_{0};
};

TEST_F(SchedulerTest, RecycledExecutorsAreNewThreadsThatServeOn) {
  SetUpCountingBackend backend;
  backend_ = &backend;
  Start(Config(1), /*executors=*/2);
  ASSERT_TRUE(test_support::Eventually([&] { return backend.set_ups_ == 2; }));
  EXPECT_TRUE(Submit(1).get().ok());
  std::atomic<int> after_exit{0};
  scheduler_->RecycleExecutors([&] { ++after_exit; });
  ASSERT_TRUE(test_support::Eventually([&] { return backend.set_ups_ == 4 && after_exit == 2; }));
  EXPECT_EQ(scheduler_->recycled_executors(), 2);
  EXPECT_EQ(backend.again_, 0);  // each set-up ran on a thread of its own
  model_->CloseGate();
  auto a = Submit(2);
  auto b = Submit(3);
  model_->WaitForCalls(3);  // both new executors run a batch at once
  EXPECT_EQ(model_->max_concurrent(), 2);
  model_->OpenGate();
  EXPECT_EQ(Floats(a.get()->outputs[0].tensor), (std::vector<float>{2, 3}));
  EXPECT_EQ(Floats(b.get()->outputs[0].tensor), (std::vector<float>{3, 4}));
}

TEST_F(SchedulerTest, ARecycleWaitsForTheRunningBatchAndLosesNoQueuedRequest) {
  SetUpCountingBackend backend;
  backend_ = &backend;
  Start(Config(1), /*executors=*/1);
  model_->CloseGate();
  auto running = Submit(1);
  model_->WaitForCalls(1);
  auto queued = Submit(2);
  scheduler_->RecycleExecutors(nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(scheduler_->recycled_executors(), 0);  // busy: not replaced mid-batch
  model_->OpenGate();
  EXPECT_TRUE(running.get().ok());
  auto q = queued.get();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(Floats(q->outputs[0].tensor), (std::vector<float>{2, 3}));
  ASSERT_TRUE(test_support::Eventually([&] { return scheduler_->recycled_executors() == 1; }));
  EXPECT_EQ(backend.set_ups_, 2);
}

TEST_F(SchedulerTest, StoppingWhileExecutorsAreReplacedJoinsEveryThread) {
  for (int round = 0; round < 20; ++round) {
    Start(Config(1), /*executors=*/2);
    EXPECT_TRUE(Submit(1).get().ok());
    scheduler_->RecycleExecutors(nullptr);
    if (round % 2) scheduler_->RecycleExecutors(nullptr);
    scheduler_.reset();  // joins predecessors and successors alike (ASan/TSan: no leak, no race)
    queue_.reset();
  }
}

}  // namespace
}  // namespace inferd::scheduler
