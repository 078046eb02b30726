// Calibration that does not block AddModel: adopted from an earlier load
// (ModelSpec::known_calibration) or deferred until the model's requests queue
// (ModelSpec::defer_calibration). One executor and a gated fake model make the
// order of events fixed: no sleeps, no timing.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <thread>

#include "backend/fake/fake_backend.h"
#include "scheduler/scheduler.h"
#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;

class DeferredCalibrationTest : public ::testing::Test {
 protected:
  void Start(ModelSpec spec) {
    Scheduler::Options opts;
    opts.executors.assign(1, ExecutorSpec{});
    opts.metrics = &registry_;
    model_ = std::make_shared<backend::FakeModel>(spec.config);
    // Per item: 3 ms at batch 1, 2 ms at batch 2, 2.5 ms at 4 and 8: batch 2 pays.
    const std::map<int, double> cost = {{1, 3}, {2, 4}, {4, 10}, {8, 20}};
    opts.calibration.timer = [model = model_, cost](const std::function<void()>& call) {
      call();
      return cost.at(static_cast<int>(model->batch_sizes().back()));
    };
    if (hold_calibration_) {
      // The first timed call (the calibration's) waits for the test's word.
      opts.calibration.timer = [this, timer = opts.calibration.timer](
                                   const std::function<void()>& call) {
        if (!calibration_started_.exchange(true)) {
          started_.set_value();
          release_.get_future().wait();
        }
        return timer(call);
      };
    }
    scheduler_ = std::move(*Scheduler::Create(opts));
    spec.name = "m:1";
    spec.version = "1";
    spec.model = model_;
    queue_ = scheduler_->AddModel(std::move(spec));
  }

  static ModelSpec Spec() {
    ModelSpec spec;
    spec.config = Config(8);
    return spec;
  }

  std::future<StatusOr<InferenceResponse>> Submit(float start) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    auto future = promise->get_future();
    InferenceRequest r;
    r.inputs = {{"x", FloatTensor({1, 2}, start)}};
    Status st = scheduler_->Enqueue(*queue_, std::move(r), [promise](StatusOr<InferenceResponse> res) {
      promise->set_value(std::move(res));
    });
    if (!st.ok()) promise->set_value(st);
    return future;
  }

  bool hold_calibration_ = false;
  std::atomic<bool> calibration_started_{false};
  std::promise<void> started_, release_;
  metrics::Registry registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::shared_ptr<backend::FakeModel> model_;
  std::shared_ptr<ScheduledModel> queue_;
};

TEST_F(DeferredCalibrationTest, AKnownCalibrationIsAdoptedWithoutMeasuring) {
  ModelSpec spec = Spec();
  BatchCalibration known;
  known.calibrated = true;
  known.note = "earlier";
  known.sizes = {{1, 3, 3, true}, {2, 4, 2, true}, {4, 10, 2.5, false}};
  known.max_batch = 2;
  known.seconds = 0.5;
  spec.known_calibration = known;
  Start(std::move(spec));
  EXPECT_TRUE(model_->batch_sizes().empty()) << "nothing measured";
  const BatchCalibration c = scheduler_->GetCalibration(*queue_);
  ASSERT_TRUE(c.calibrated);
  EXPECT_EQ(c.max_batch, 2);
  EXPECT_EQ(c.seconds, 0) << "it cost nothing at this load";
  EXPECT_EQ(registry_.GetGauge("inferd_batch_size_limit", "", {{"model", "m"}, {"version", "1"}})
                .value(),
            2);
}

TEST_F(DeferredCalibrationTest, ADeferredCalibrationRunsOnlyOnceRequestsQueue) {
  ModelSpec spec = Spec();
  spec.defer_calibration = true;
  Start(std::move(spec));
  EXPECT_TRUE(model_->batch_sizes().empty()) << "AddModel measured nothing";
  BatchCalibration c = scheduler_->GetCalibration(*queue_);
  EXPECT_FALSE(c.calibrated);
  EXPECT_NE(c.note.find("deferred"), std::string::npos) << c.note;

  // Requests one at a time never queue: still not calibrated.
  ASSERT_TRUE(Submit(0).get().ok());
  ASSERT_TRUE(Submit(1).get().ok());
  EXPECT_EQ(model_->batch_sizes(), (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(scheduler_->GetCalibration(*queue_).calibrated);

  // Two requests wait behind a running one: their batch starts the calibration,
  // which the (only) executor runs before its next batch.
  model_->CloseGate();
  auto first = Submit(2);
  model_->WaitForCalls(3);
  auto second = Submit(3);
  auto third = Submit(4);
  model_->OpenGate();
  ASSERT_TRUE(first.get().ok());
  ASSERT_TRUE(second.get().ok());
  ASSERT_TRUE(third.get().ok());
  ASSERT_TRUE(Submit(5).get().ok());  // runs after the calibration task
  c = scheduler_->GetCalibration(*queue_);
  ASSERT_TRUE(c.calibrated) << c.note;
  EXPECT_EQ(c.max_batch, 2);
  const size_t calls = model_->batch_sizes().size();
  // Later queueing does not calibrate again.
  model_->CloseGate();
  auto a = Submit(6);
  model_->WaitForCalls(calls + 1);
  auto b = Submit(7);
  auto d = Submit(8);
  model_->OpenGate();
  ASSERT_TRUE(a.get().ok());
  ASSERT_TRUE(b.get().ok());
  ASSERT_TRUE(d.get().ok());
  ASSERT_TRUE(Submit(9).get().ok());
  const auto sizes = model_->batch_sizes();
  EXPECT_EQ(std::vector<int64_t>(sizes.begin() + static_cast<long>(calls), sizes.end()),
            (std::vector<int64_t>{1, 2, 1}));
}

TEST_F(DeferredCalibrationTest, ACalibrationEndingAfterTheUnloadExportsNothing) {
  // The repository removes an unloaded model's series; a deferred calibration
  // that ends later must not bring them back.
  hold_calibration_ = true;
  ModelSpec spec = Spec();
  spec.defer_calibration = true;
  Start(std::move(spec));
  model_->CloseGate();
  auto first = Submit(0);
  model_->WaitForCalls(1);
  auto second = Submit(1);
  auto third = Submit(2);
  model_->OpenGate();  // the queued pair starts the calibration, held in its timer
  started_.get_future().wait();
  scheduler_->RemoveModel(queue_);
  registry_.RemoveSeries("model", "m");
  release_.set_value();
  ASSERT_TRUE(first.get().ok());
  ASSERT_TRUE(second.get().ok());
  ASSERT_TRUE(third.get().ok());
  // The calibration has published once its table is on the queue.
  for (int i = 0; i < 2000 && !scheduler_->GetCalibration(*queue_).calibrated; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(scheduler_->GetCalibration(*queue_).calibrated);
  EXPECT_EQ(registry_.RenderPrometheus().find("model=\"m\""), std::string::npos)
      << registry_.RenderPrometheus();
}

}  // namespace
}  // namespace inferd::scheduler
