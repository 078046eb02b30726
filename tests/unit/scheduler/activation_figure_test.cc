// Where a model's activation figure comes from (activation_memory.h): the
// calibration's extra forward, the warming call of a max_batch_size 1 model's
// timing, or, with a memory limit only, a forward of its own. A fake process
// whose forwards add 10 MiB per item at their peak; one executor, so that a
// request answered means the tasks posted before it have run: no sleeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>

#include "scheduler/scheduler.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/test_units.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;

using test_support::kMiB;

struct FakeFigureProcess {
  std::atomic<int64_t> resident{300 * kMiB};
  std::atomic<int64_t> peak{300 * kMiB};
  MemoryProbe Probe() {
    MemoryProbe p;
    p.resident = [this] { return resident.load(); };
    p.take_peak = [this] { return peak.exchange(resident.load()); };
    p.release_free = [] {};
    return p;
  }
};

// Identity; each forward holds 10 MiB per item at its peak.
class PeakModel : public backend::Model {
 public:
  explicit PeakModel(FakeFigureProcess* process) : process_(process) {}
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    ++calls;
    const int64_t bytes = inputs[0].tensor.shape()[0] * 10 * kMiB;
    const int64_t now = process_->resident += bytes;
    int64_t seen = process_->peak.load();
    while (seen < now && !process_->peak.compare_exchange_weak(seen, now)) {
    }
    process_->resident -= bytes;
    return std::vector<NamedTensor>{{"y", inputs[0].tensor}};
  }
  std::atomic<int> calls{0};

 private:
  FakeFigureProcess* process_;
};

class ActivationFigureTest : public ::testing::Test {
 protected:
  std::shared_ptr<ScheduledModel> Start(config::ModelConfig config, int64_t limit) {
    Scheduler::Options opts;
    opts.executors.assign(1, ExecutorSpec{});
    opts.metrics = &registry_;
    opts.time_unbatched = true;
    opts.calibration.timer = [](const std::function<void()>& call) {
      call();
      return 1.0;
    };
    opts.memory_probe = process_.Probe();
    opts.memory_limit = limit;
    opts.memory_limit_source = "test";
    scheduler_ = std::move(*Scheduler::Create(opts));
    ModelSpec spec;
    spec.config = std::move(config);
    spec.name = "m:1";
    spec.version = "1";
    spec.model = model_;
    return scheduler_->AddModel(std::move(spec));
  }

  // Runs one request through, so that every task posted before has run.
  void RoundTrip(ScheduledModel& m) {
    std::promise<StatusOr<InferenceResponse>> answered;
    InferenceRequest r;
    r.inputs = {{"x", FloatTensor({1, 2})}};
    ASSERT_TRUE(
        scheduler_
            ->Enqueue(m, std::move(r),
                      [&](StatusOr<InferenceResponse> res) { answered.set_value(std::move(res)); })
            .ok());
    ASSERT_TRUE(answered.get_future().get().ok());
  }

  double Gauge(const std::string& name) {
    return registry_.GetGauge(name, "", {{"model", "m"}, {"version", "1"}}).value();
  }

  FakeFigureProcess process_;
  std::shared_ptr<PeakModel> model_ = std::make_shared<PeakModel>(&process_);
  metrics::Registry registry_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(ActivationFigureTest, ACalibratedModelIsMeasuredOnItsLargestBatch) {
  auto m = Start(Config(8), 0);
  const ActivationMemory a = scheduler_->GetCalibration(*m).activation;
  EXPECT_EQ(a.batch, 8);
  EXPECT_EQ(a.peak_bytes, 80 * kMiB);
  EXPECT_EQ(a.bytes_per_item, 10 * kMiB);
  EXPECT_EQ(Gauge("inferd_activation_bytes_per_item"), 10 * kMiB);
}

TEST_F(ActivationFigureTest, AnUnbatchedModelIsMeasuredOnItsTimingsWarmingCall) {
  auto m = Start(Config(1), 0);
  RoundTrip(*m);
  const ActivationMemory a = scheduler_->GetCalibration(*m).activation;
  EXPECT_EQ(a.bytes_per_item, 10 * kMiB);
  EXPECT_EQ(model_->calls.load(), 3) << "the timing's two calls and the request: no extra";
}

TEST_F(ActivationFigureTest, AModelNotCalibratedGetsAForwardOfItsOwnOnlyUnderALimit) {
  config::ModelConfig config = Config(8);
  config.dynamic_batching.calibrate = false;
  auto m = Start(config, 0);
  RoundTrip(*m);
  EXPECT_FALSE(scheduler_->GetCalibration(*m).activation.measured());
  EXPECT_EQ(model_->calls.load(), 1) << "the request alone";

  scheduler_.reset();
  model_->calls = 0;
  m = Start(config, 4096 * kMiB);
  RoundTrip(*m);
  EXPECT_EQ(scheduler_->GetCalibration(*m).activation.bytes_per_item, 10 * kMiB);
  EXPECT_EQ(model_->calls.load(), 2);
}

}  // namespace
}  // namespace inferd::scheduler
