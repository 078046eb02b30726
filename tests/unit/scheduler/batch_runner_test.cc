#include "scheduler/batch_runner.h"

#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <utility>
#include <stdexcept>

#include "backend/fake/fake_backend.h"
#include "scheduler/model_queue.h"
#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;
using testing::Floats;

// A model that breaks the backend contract by throwing from Execute.
class ThrowingModel : public backend::Model {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>&) override {
    throw 42;  // not even a std::exception
  }
};

// output = input, the same bytes: what an identity TorchScript model returns
// (FromTorch borrows the storage that ToTorch wrapped around the batch).
class IdentityModel : public backend::Model {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    return std::vector<NamedTensor>{{"y", inputs[0].tensor}};
  }
};

// output = input + 1 in new bytes: what a real network returns.
class AddOneModel : public backend::Model {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    const Tensor& in = inputs[0].tensor;
    Tensor out = Tensor::Allocate(in.dtype(), in.shape());
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      out.mutable_data_as<float>()[i] = in.data_as<float>()[i] + 1;
    }
    return std::vector<NamedTensor>{{"y", out}};
  }
};

class BatchRunnerTest : public ::testing::Test {
 protected:
  BatchRunner MakeRunner(ModelHooks hooks, std::shared_ptr<backend::Model> model = nullptr) {
    BatchRunner::Options o;
    o.name = "m:1";
    o.config = Config(8);
    o.model = model ? model : std::make_shared<backend::FakeModel>(o.config);
    o.hooks = std::move(hooks);
    return BatchRunner(std::move(o));
  }

  // A request carrying one raw payload whose text is `value`; its answer
  // lands in results_[i].
  void AddRaw(const std::string& value) { batch_.push_back(MakeRaw(value)); }

  // The same request, not yet in the batch (for a top-up).
  QueuedRequest MakeRaw(const std::string& value) {
    const size_t i = results_.size();
    results_.emplace_back();
    answers_.push_back(0);
    QueuedRequest q;
    q.request.raw.push_back({"text/plain", value});
    q.done = [this, i](StatusOr<InferenceResponse> r) {
      ++answers_[i];
      results_[i] = std::move(r);
    };
    return q;
  }

  // Turns the payload's text into the tensor [[v, v + 1]]; "throw" throws.
  static ModelHooks ParsingHooks() {
    ModelHooks h;
    h.preprocess = [](InferenceRequest& r) -> Status {
      if (r.raw[0].bytes == "throw") throw std::runtime_error("cv::Exception: decode failed");
      if (r.raw[0].bytes == "bad") return InvalidArgument("not a number");
      r.inputs = {{"x", FloatTensor({1, 2}, std::stof(r.raw[0].bytes))}};
      return Status::Ok();
    };
    return h;
  }

  void ExpectAnsweredOnce() {
    for (size_t i = 0; i < answers_.size(); ++i) EXPECT_EQ(answers_[i], 1) << "request " << i;
  }

  std::vector<QueuedRequest> batch_;
  std::vector<std::optional<StatusOr<InferenceResponse>>> results_;
  std::vector<int> answers_;
};

TEST_F(BatchRunnerTest, RunsTheBatchAndAnswersEachRequestWithItsOwnRows) {
  BatchRunner runner = MakeRunner(ParsingHooks());
  AddRaw("1");
  AddRaw("10");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  ASSERT_TRUE(results_[1]->ok()) << results_[1]->status().ToString();
  EXPECT_EQ(Floats((*results_[1])->outputs[0].tensor), (std::vector<float>{10, 11}));
  EXPECT_EQ((*results_[1])->batch_size, 2);
}

TEST_F(BatchRunnerTest, APreprocessHookThatThrowsFailsOnlyItsRequest) {
  BatchRunner runner = MakeRunner(ParsingHooks());
  AddRaw("1");
  AddRaw("throw");
  AddRaw("bad");
  AddRaw("5");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  ASSERT_FALSE(results_[1]->ok());
  EXPECT_EQ(results_[1]->status().code(), StatusCode::kInternal);
  EXPECT_EQ(results_[1]->status().message(),
            "model 'm:1': pre-processing threw: cv::Exception: decode failed");
  EXPECT_EQ(results_[2]->status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(results_[0]->ok());
  ASSERT_TRUE(results_[3]->ok());
  EXPECT_EQ((*results_[3])->batch_size, 2);  // the two good requests ran together
  EXPECT_EQ(Floats((*results_[3])->outputs[0].tensor), (std::vector<float>{5, 6}));
}

TEST_F(BatchRunnerTest, APostprocessHookOutOfMemoryAnswers500) {
  ModelHooks hooks = ParsingHooks();
  hooks.postprocess = [](InferenceResponse&) -> Status { throw std::bad_alloc(); };
  BatchRunner runner = MakeRunner(hooks);
  AddRaw("1");
  AddRaw("2");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  for (auto& r : results_) {
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->status().code(), StatusCode::kInternal);
    EXPECT_EQ(r->status().message(),
              "model 'm:1': post-processing threw: out of memory (std::bad_alloc)");
  }
}

TEST_F(BatchRunnerTest, AModelThatThrowsAnythingAnswersTheWholeBatch500) {
  BatchRunner runner = MakeRunner(ParsingHooks(), std::make_shared<ThrowingModel>());
  AddRaw("1");
  AddRaw("2");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  for (auto& r : results_) {
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->status().code(), StatusCode::kInternal);
    EXPECT_EQ(r->status().message(),
              "model 'm:1': the model's forward() threw: an exception that is not a "
              "std::exception");
  }
}

TEST_F(BatchRunnerTest, RequestsFromTheTopUpArePreprocessedAndRunInTheSameBatch) {
  BatchRunner runner = MakeRunner(ParsingHooks());
  AddRaw("1");
  std::vector<QueuedRequest> later;
  later.push_back(MakeRaw("bad"));  // fails alone, does not count as an item
  later.push_back(MakeRaw("20"));
  later[1].joined = TimePoint() + std::chrono::microseconds(700);
  later[1].request.enqueue_time = TimePoint() + std::chrono::microseconds(500);
  std::vector<int> asked;
  runner.Run(batch_, TimePoint(), [&](int items) {
    asked.push_back(items);
    return std::exchange(later, {});
  });
  EXPECT_EQ(asked, (std::vector<int>{1, 2})) << "after each round, with the live items so far";
  ASSERT_EQ(batch_.size(), 3u) << "joined requests are appended to the batch";
  ExpectAnsweredOnce();
  EXPECT_EQ(results_[1]->status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(results_[2]->ok()) << results_[2]->status().ToString();
  EXPECT_EQ(Floats((*results_[2])->outputs[0].tensor), (std::vector<float>{20, 21}));
  EXPECT_EQ((*results_[2])->batch_size, 2);
  EXPECT_EQ((*results_[2])->queue_us, 200) << "its queue time ends when it joined";
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{1, 2}));
}

TEST_F(BatchRunnerTest, ACompletionThatThrowsIsNotAnsweredTwice) {
  BatchRunner runner = MakeRunner(ParsingHooks());
  AddRaw("1");
  AddRaw("2");
  batch_[0].done = [this](StatusOr<InferenceResponse>) {
    ++answers_[0];
    throw std::runtime_error("the connection is gone");
  };
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  ASSERT_TRUE(results_[1]->ok());
}

// The aliasing case: the responses of the first batch are slices of the
// batch input itself. A second batch with other data must not reuse (and
// overwrite) those bytes while the responses hold them.
TEST_F(BatchRunnerTest, ABatchWhoseOutputIsItsInputKeepsItsAnswersAcrossTheNextBatch) {
  BatchRunner runner = MakeRunner(ParsingHooks(), std::make_shared<IdentityModel>());
  AddRaw("1");
  AddRaw("10");
  runner.Run(batch_, TimePoint());
  batch_.clear();
  AddRaw("100");
  AddRaw("1000");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  for (auto& r : results_) ASSERT_TRUE(r->ok()) << r->status().ToString();
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats((*results_[1])->outputs[0].tensor), (std::vector<float>{10, 11}));
  EXPECT_EQ(Floats((*results_[2])->outputs[0].tensor), (std::vector<float>{100, 101}));
  EXPECT_EQ(Floats((*results_[3])->outputs[0].tensor), (std::vector<float>{1000, 1001}));
  EXPECT_EQ(runner.input_pool_stats().reused, 0u) << "the first batch's bytes were still held";
  EXPECT_EQ(runner.input_pool_stats().allocated, 2u);

  // Once the answers are gone (sent), their bytes serve the next batch.
  results_.clear();
  answers_.clear();
  batch_.clear();
  EXPECT_EQ(runner.input_pool_stats().free_buffers, 2u);
  AddRaw("7");
  AddRaw("8");
  runner.Run(batch_, TimePoint());
  EXPECT_EQ(runner.input_pool_stats().reused, 1u);
  ASSERT_TRUE(results_[1]->ok());
  EXPECT_EQ(Floats((*results_[1])->outputs[0].tensor), (std::vector<float>{8, 9}));
}

TEST_F(BatchRunnerTest, BatchInputBuffersAreReusedWhenNothingHoldsThem) {
  BatchRunner runner = MakeRunner(ParsingHooks(), std::make_shared<AddOneModel>());
  for (int round = 0; round < 3; ++round) {
    batch_.clear();
    AddRaw(std::to_string(10 * round));
    AddRaw(std::to_string(10 * round + 5));
    runner.Run(batch_, TimePoint());
  }
  ExpectAnsweredOnce();
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats((*results_[5])->outputs[0].tensor), (std::vector<float>{26, 27}));
  EXPECT_EQ(runner.input_pool_stats().allocated, 1u);
  EXPECT_EQ(runner.input_pool_stats().reused, 2u);
}

}  // namespace
}  // namespace inferd::scheduler
