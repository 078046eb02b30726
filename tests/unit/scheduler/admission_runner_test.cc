// BatchRunner with memory admission (batch_runner.h, memory_admission.h):
// fake figures, a model that records the batches it runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>

#include "scheduler/batch_runner.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/test_units.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::Floats;
using testing::FloatTensor;

using test_support::kMiB;

// output = input + 1; records each batch's items.
class CountingModel : public backend::Model {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    const Tensor& in = inputs[0].tensor;
    batches.push_back(in.shape()[0]);
    Tensor out = Tensor::Allocate(in.dtype(), in.shape());
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      out.mutable_data_as<float>()[i] = in.data_as<float>()[i] + 1;
    }
    return std::vector<NamedTensor>{{"y", out}};
  }
  std::vector<int64_t> batches;
};

class AdmissionRunnerTest : public ::testing::Test {
 protected:
  // A process of 500 MiB resident under a limit of 1000 MiB after the margin;
  // the model needs 100 MiB per item.
  std::unique_ptr<BatchRunner> MakeRunner(ModelHooks hooks = {}) {
    MemoryProbe probe;
    probe.resident = [this] { return resident_.load(); };
    probe.take_peak = [this] { return resident_.load(); };
    probe.release_free = [] {};
    BatchRunner::Options o;
    o.name = "m:1";
    o.config = Config(8);
    o.model = model_;
    o.hooks = std::move(hooks);
    o.metrics.admission_cut = cut_;
    o.metrics.admission_refused = refused_;
    o.admission = std::make_shared<MemoryAdmission>(
        MemoryAdmission::Options{1064 * kMiB, "--memory-budget 1.0 GiB", probe});
    auto runner = std::make_unique<BatchRunner>(std::move(o));
    ActivationMemory a;
    a.bytes_per_item = 100 * kMiB;
    a.batch = 1;
    a.peak_bytes = a.bytes_per_item;
    runner->set_activation(a);
    return runner;
  }

  // A request of `items` items [v, v + 1] each.
  void Add(int items, float v) {
    const size_t i = results_.size();
    results_.emplace_back();
    QueuedRequest q;
    q.items = items;
    q.request.id = std::to_string(i);
    q.request.inputs = {{"x", FloatTensor({items, 2}, v)}};
    q.done = [this, i](StatusOr<InferenceResponse> r) { results_[i] = std::move(r); };
    batch_.push_back(std::move(q));
  }

  std::atomic<int64_t> resident_{500 * kMiB};
  std::shared_ptr<CountingModel> model_ = std::make_shared<CountingModel>();
  std::shared_ptr<metrics::Counter> cut_ = std::make_shared<metrics::Counter>();
  std::shared_ptr<metrics::Counter> refused_ = std::make_shared<metrics::Counter>();
  std::vector<QueuedRequest> batch_;
  std::vector<std::optional<StatusOr<InferenceResponse>>> results_;
};

TEST_F(AdmissionRunnerTest, ABatchThatFitsRunsWhole) {
  auto runner = MakeRunner();
  for (int i = 0; i < 5; ++i) Add(1, static_cast<float>(i));
  runner->Run(batch_, TimePoint());
  EXPECT_EQ(model_->batches, (std::vector<int64_t>{5}));  // 500 + 5 x 100 = 1000
  EXPECT_EQ(cut_->value(), 0);
}

TEST_F(AdmissionRunnerTest, ABatchThatDoesNotFitRunsItsOldestAndGivesTheRestBackInOrder) {
  auto runner = MakeRunner();
  for (int i = 0; i < 7; ++i) Add(1, static_cast<float>(10 * i));
  std::vector<std::string> given_back;
  runner->Run(batch_, TimePoint(), nullptr, [&](std::vector<QueuedRequest>& back) {
    for (const auto& q : back) given_back.push_back(q.request.id);
    return true;
  });
  EXPECT_EQ(model_->batches, (std::vector<int64_t>{5}));
  EXPECT_EQ(given_back, (std::vector<std::string>{"5", "6"}));
  EXPECT_EQ(cut_->value(), 1);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(results_[i] && results_[i]->ok()) << i;
    EXPECT_EQ(Floats((*results_[i])->outputs[0].tensor),
              (std::vector<float>{10.f * i + 1, 10.f * i + 2}));
  }
  EXPECT_FALSE(results_[5]) << "given back, not answered";
}

TEST_F(AdmissionRunnerTest, WithoutAGiveBackTheCutPartsRunInTurn) {
  auto runner = MakeRunner();
  Add(3, 0);
  Add(3, 100);
  Add(2, 200);
  runner->Run(batch_, TimePoint());
  EXPECT_EQ(model_->batches, (std::vector<int64_t>{3, 5}));  // 3 + 3 > 5; then 3 + 2
  for (auto& r : results_) ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(Floats((*results_[2])->outputs[0].tensor), (std::vector<float>{201, 202, 203, 204}));
}

TEST_F(AdmissionRunnerTest, ARequestThatCanNeverFitIsRefusedWithTheFiguresAndTheOthersRun) {
  auto runner = MakeRunner();
  Add(1, 0);
  Add(6, 100);  // 600 MiB over 500 resident: never under 1000
  Add(1, 200);
  runner->Run(batch_, TimePoint());
  ASSERT_TRUE(results_[1]);
  EXPECT_EQ(results_[1]->status().code(), StatusCode::kPayloadTooLarge);
  EXPECT_NE(results_[1]->status().message().find("needs 600.0 MiB"), std::string::npos)
      << results_[1]->status().message();
  EXPECT_NE(results_[1]->status().message().find("resident 500.0 MiB"), std::string::npos);
  EXPECT_EQ(refused_->value(), 1);
  ASSERT_TRUE(results_[0] && results_[0]->ok());
  ASSERT_TRUE(results_[2] && results_[2]->ok());
}

TEST_F(AdmissionRunnerTest, ABatchPreprocessedIntoRowsRunsInPartsOnTheRightRows) {
  ModelHooks h;
  h.preprocess = [](InferenceRequest&) { return Status::Ok(); };
  h.preprocess_into = [](InferenceRequest& r, std::byte* dst, size_t) -> Status {
    for (size_t i = 0; i < r.raw.size(); ++i) {
      const float row[2] = {std::stof(r.raw[i].bytes), std::stof(r.raw[i].bytes) + 1};
      std::memcpy(dst + i * sizeof row, row, sizeof row);
    }
    r.raw.clear();
    return Status::Ok();
  };
  auto runner = MakeRunner(h);
  for (int i = 0; i < 7; ++i) {
    results_.emplace_back();
    QueuedRequest q;
    q.request.raw.push_back({"text/plain", std::to_string(10 * i)});
    q.done = [this, i](StatusOr<InferenceResponse> r) { results_[i] = std::move(r); };
    batch_.push_back(std::move(q));
  }
  runner->Run(batch_, TimePoint());
  EXPECT_EQ(model_->batches, (std::vector<int64_t>{5, 2}));
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(results_[i] && results_[i]->ok()) << i;
    EXPECT_EQ(Floats((*results_[i])->outputs[0].tensor),
              (std::vector<float>{10.f * i + 1, 10.f * i + 2}))
        << i;
  }
}

TEST_F(AdmissionRunnerTest, AnUnmeasuredModelIsNotChecked) {
  auto runner = MakeRunner();
  runner->set_activation(ActivationMemory{});
  for (int i = 0; i < 8; ++i) Add(1, 0);
  runner->Run(batch_, TimePoint());
  EXPECT_EQ(model_->batches, (std::vector<int64_t>{8}));
}

}  // namespace
}  // namespace inferd::scheduler
