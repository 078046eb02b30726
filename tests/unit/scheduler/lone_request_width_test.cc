// A lone request runs on the cores of the idle executors (issue 37, part 3):
// the decision alone, then the scheduler with the fake backend, which
// records the width each call was given.
#include "scheduler/lone_request_width.h"

#include <gtest/gtest.h>

#include <future>

#include "backend/fake/fake_backend.h"
#include "scheduler/scheduler.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/eventually.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;

LoneRequestInput Lone(std::vector<ExecutorState> executors, int self = 0) {
  LoneRequestInput in;
  in.model_runs_wide = true;
  in.batch_requests = 1;
  in.self = self;
  in.executors = std::move(executors);
  return in;
}

constexpr auto kIdle = ExecutorState::kIdle;
constexpr auto kBusy = ExecutorState::kBusy;
constexpr auto kLent = ExecutorState::kLent;

TEST(LoneRequestWidthTest, ALoneRequestTakesEveryIdleExecutorButItself) {
  EXPECT_EQ(ExecutorsToLend(Lone({kBusy, kIdle, kIdle, kBusy, kLent}, 0)),
            (std::vector<int>{1, 2}));
  EXPECT_EQ(ExecutorsToLend(Lone({kIdle, kIdle}, 1)), (std::vector<int>{0}));
  EXPECT_TRUE(ExecutorsToLend(Lone({kBusy, kBusy})).empty()) << "nothing idle to lend";
  EXPECT_TRUE(ExecutorsToLend(Lone({kBusy})).empty()) << "one executor";
}

TEST(LoneRequestWidthTest, UnderLoadThePlanStands) {
  LoneRequestInput queued = Lone({kBusy, kIdle});
  queued.anything_queued = true;  // another request waits: the idle executor takes it
  EXPECT_TRUE(ExecutorsToLend(queued).empty());
  LoneRequestInput batch = Lone({kBusy, kIdle});
  batch.batch_requests = 2;  // not lone: the batch was formed from several
  EXPECT_TRUE(ExecutorsToLend(batch).empty());
  // The first back after a batch of several: its companions are on their way.
  LoneRequestInput after = Lone({kBusy, kIdle});
  after.previous_batch_requests = 8;
  EXPECT_TRUE(ExecutorsToLend(after).empty());
}

TEST(LoneRequestWidthTest, OnlyForModelsThatRunWideAndWhenEnabled) {
  LoneRequestInput narrow = Lone({kBusy, kIdle});
  narrow.model_runs_wide = false;  // e.g. XGBoost: its threads are fixed at load
  EXPECT_TRUE(ExecutorsToLend(narrow).empty());
  LoneRequestInput off = Lone({kBusy, kIdle});
  off.enabled = false;
  EXPECT_TRUE(ExecutorsToLend(off).empty());
}

TEST(LoneRequestWidthTest, TheWideExecutorKeepsItsOwnCoresFirst) {
  std::vector<ExecutorSpec> executors = {{{0, 1}, 2}, {{2}, 1}, {{3}, 1}};
  ExecutorSpec wide = WidenedExecutor(executors, 1, {0, 2});
  EXPECT_EQ(wide.cores, (std::vector<int>{2, 0, 1, 3}));
  EXPECT_EQ(wide.num_threads, 4);
  std::vector<ExecutorSpec> unpinned(3);  // no cores: the threads add up
  EXPECT_EQ(WidenedExecutor(unpinned, 0, {1, 2}).num_threads, 3);
  EXPECT_EQ(WidenedExecutor(unpinned, 0, {}).num_threads, 1);
}

class LoneRequestSchedulerTest : public ::testing::Test {
 protected:
  void Start(bool runs_wide, bool enabled = true) {
    Scheduler::Options opts;
    opts.executors.assign(2, ExecutorSpec{});
    opts.metrics = &registry_;
    opts.calibrate = false;
    opts.backend = &backend_;
    opts.widen_lone_requests = enabled;
    auto s = Scheduler::Create(opts);
    ASSERT_TRUE(s.ok());
    scheduler_ = std::move(*s);
    model_ = std::make_shared<backend::FakeModel>(Config(1));
    model_->set_runs_wide(runs_wide);
    ModelSpec spec;
    spec.name = "m:1";
    spec.version = "1";
    spec.config = Config(1);
    spec.model = model_;
    queue_ = scheduler_->AddModel(std::move(spec));
  }

  std::future<StatusOr<InferenceResponse>> Submit() {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    auto future = promise->get_future();
    InferenceRequest r;
    r.inputs = {{"x", FloatTensor({1, 2})}};
    Status st = scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    });
    if (!st.ok()) promise->set_value(st);
    return future;
  }

  // Sends lone requests until one finds the other executor idle (the
  // executors park themselves a moment after start): true when one ran wide.
  bool RunOneWide() {
    return test_support::Eventually([&] {
      EXPECT_TRUE(Submit().get().ok());
      return model_->call_threads().back() == 2;
    });
  }

  double Metric(const std::string& name) {
    return registry_.GetGauge(name, "").value();
  }
  double WideBatches() {
    return registry_
        .GetCounter("inferd_lone_wide_batches_total", "", {{"model", "m"}, {"version", "1"}})
        .value();
  }

  backend::FakeBackend backend_;
  metrics::Registry registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::shared_ptr<backend::FakeModel> model_;
  std::shared_ptr<ScheduledModel> queue_;
};

TEST_F(LoneRequestSchedulerTest, ALoneRequestRunsOnBothExecutorsCores) {
  Start(/*runs_wide=*/true);
  ASSERT_TRUE(RunOneWide());
  EXPECT_GE(WideBatches(), 1);
  EXPECT_EQ(Metric("inferd_compute_threads_peak"), 2) << "never more than the executors' cores";
  // Answers go out before the executor's accounting: it follows at once.
  EXPECT_TRUE(test_support::Eventually([&] { return Metric("inferd_compute_threads") == 0; }));
}

TEST_F(LoneRequestSchedulerTest, RequestsThatQueueMeanwhileRunOnePerExecutor) {
  Start(/*runs_wide=*/true);
  ASSERT_TRUE(RunOneWide());
  const size_t before = model_->call_threads().size();
  model_->CloseGate();
  auto lone = Submit();
  model_->WaitForCalls(before + 1);  // it runs wide: the other executor is parked
  EXPECT_EQ(model_->call_threads().back(), 2);
  model_->CloseGateAt(before + 2);  // b, the next to start, holds its executor
  auto b = Submit();
  auto c = Submit();
  model_->OpenGate();
  model_->WaitForCalls(before + 3);  // c started on the other executor meanwhile
  model_->OpenGate();
  ASSERT_TRUE(lone.get().ok());
  ASSERT_TRUE(b.get().ok());
  ASSERT_TRUE(c.get().ok());
  const std::vector<int> threads = model_->call_threads();
  ASSERT_EQ(threads.size(), before + 3);
  // b found c queued behind it, c found b's executor busy: both ran narrow,
  // each on its own executor, and never 3 threads at once.
  EXPECT_EQ(threads[before + 1], 1);
  EXPECT_EQ(threads[before + 2], 1);
  EXPECT_EQ(Metric("inferd_compute_threads_peak"), 2);
  // Answers go out before the executor's accounting: it follows at once.
  EXPECT_TRUE(test_support::Eventually([&] { return Metric("inferd_compute_threads") == 0; }));
}

TEST_F(LoneRequestSchedulerTest, AModelThatCannotRunWideKeepsItsCore) {
  Start(/*runs_wide=*/false);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Submit().get().ok());
  for (int t : model_->call_threads()) EXPECT_EQ(t, 1);
  EXPECT_EQ(WideBatches(), 0);
}

TEST_F(LoneRequestSchedulerTest, TurnedOffEveryRequestKeepsItsCore) {
  Start(/*runs_wide=*/true, /*enabled=*/false);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Submit().get().ok());
  for (int t : model_->call_threads()) EXPECT_EQ(t, 1);
  EXPECT_EQ(WideBatches(), 0);
}

}  // namespace
}  // namespace inferd::scheduler
