#include "scheduler/batch_runner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <optional>
#include <utility>
#include <stdexcept>

#include "backend/fake/fake_backend.h"
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

// AddOneModel that records the shape of every batch it runs.
class RecordingModel : public AddOneModel {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    shapes.push_back(inputs[0].tensor.shape());
    return AddOneModel::Execute(inputs);
  }
  std::vector<Shape> shapes;
};

class BatchRunnerTest : public ::testing::Test {
 protected:
  BatchRunner MakeRunner(ModelHooks hooks, std::shared_ptr<backend::Model> model = nullptr,
                         BatchRunner::Metrics metrics = {}) {
    BatchRunner::Options o;
    o.name = "m:1";
    o.config = Config(8);
    o.model = model ? model : std::make_shared<backend::FakeModel>(o.config);
    o.hooks = std::move(hooks);
    o.metrics = std::move(metrics);
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

  // ParsingHooks with preprocess_into: each raw item's [v, v + 1] written
  // straight into the batch rows it is given.
  static ModelHooks IntoRowsHooks() {
    ModelHooks h = ParsingHooks();
    h.preprocess_into = [](InferenceRequest& r, std::byte* dst, size_t dst_bytes) -> Status {
      if (dst_bytes != r.raw.size() * 2 * sizeof(float)) return Internal("rows of a wrong size");
      for (size_t i = 0; i < r.raw.size(); ++i) {
        if (r.raw[i].bytes == "throw") throw std::runtime_error("cv::Exception: decode failed");
        if (r.raw[i].bytes == "bad") return InvalidArgument("not a number");
        const float row[2] = {std::stof(r.raw[i].bytes), std::stof(r.raw[i].bytes) + 1};
        std::memcpy(dst + i * sizeof row, row, sizeof row);
      }
      r.raw.clear();
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

TEST_F(BatchRunnerTest, RecordsTheItemsOfEachForwardAndNothingElse) {
  auto sizes = std::make_shared<metrics::Histogram>(metrics::BatchSizeBuckets());
  BatchRunner runner =
      MakeRunner(ParsingHooks(), nullptr, {sizes, nullptr, nullptr, nullptr, nullptr, nullptr});
  AddRaw("1");
  AddRaw("bad");
  AddRaw("5");
  runner.Run(batch_, TimePoint());
  EXPECT_EQ(sizes->count(), 1u) << "one forward";
  EXPECT_EQ(sizes->sum(), 2) << "of the two requests that pre-processing kept";
  batch_.clear();
  AddRaw("bad");
  runner.Run(batch_, TimePoint());
  EXPECT_EQ(sizes->count(), 1u) << "no forward, nothing recorded";
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

// Pre-processing into the batch rows: the model runs on one tensor of the
// live requests' rows (a failed request leaves no gap), each answer is its own
// rows, and one pooled buffer of max_batch_size rows serves batch after batch.
TEST_F(BatchRunnerTest, PreprocessIntoWritesEachRequestIntoTheBatchRows) {
  auto model = std::make_shared<RecordingModel>();
  BatchRunner runner = MakeRunner(IntoRowsHooks(), model);
  for (int round = 0; round < 2; ++round) {
    batch_.clear();
    AddRaw(std::to_string(10 * round + 1));
    AddRaw("throw");
    AddRaw("bad");
    AddRaw(std::to_string(10 * round + 5));
    runner.Run(batch_, TimePoint());
  }
  ExpectAnsweredOnce();
  EXPECT_EQ(results_[1]->status().message(),
            "model 'm:1': pre-processing threw: cv::Exception: decode failed");
  EXPECT_EQ(results_[2]->status().code(), StatusCode::kInvalidArgument);
  ASSERT_EQ(model->shapes, (std::vector<Shape>{{2, 2}, {2, 2}}));
  for (size_t i : {0u, 3u, 4u, 7u}) ASSERT_TRUE(results_[i]->ok()) << i;
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{2, 3}));
  EXPECT_EQ(Floats((*results_[3])->outputs[0].tensor), (std::vector<float>{6, 7}));
  EXPECT_EQ(Floats((*results_[4])->outputs[0].tensor), (std::vector<float>{12, 13}));
  EXPECT_EQ(Floats((*results_[7])->outputs[0].tensor), (std::vector<float>{16, 17}));
  EXPECT_EQ((*results_[7])->batch_size, 2);
  EXPECT_EQ(runner.input_pool_stats().allocated, 1u);
  EXPECT_EQ(runner.input_pool_stats().reused, 1u);
}

// The aliasing case on the rows path: answers that are views of the batch
// rows keep them out of the pool while they live.
TEST_F(BatchRunnerTest, PreprocessIntoRowsHeldByAnswersAreNotReused) {
  BatchRunner runner = MakeRunner(IntoRowsHooks(), std::make_shared<IdentityModel>());
  AddRaw("1");
  runner.Run(batch_, TimePoint());
  batch_.clear();
  AddRaw("100");
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats((*results_[1])->outputs[0].tensor), (std::vector<float>{100, 101}));
  EXPECT_EQ(runner.input_pool_stats().allocated, 2u);
  EXPECT_EQ(runner.input_pool_stats().reused, 0u);
}

// A batch that outgrows max_batch_size rows through its top-ups moves to a
// larger buffer with the rows written so far, and every item stays in place.
TEST_F(BatchRunnerTest, PreprocessIntoGrowsTheRowsForABatchPastMaxBatchSize) {
  auto model = std::make_shared<RecordingModel>();
  BatchRunner runner = MakeRunner(IntoRowsHooks(), model);  // max_batch_size 8
  AddRaw("0");
  std::vector<QueuedRequest> later;
  for (int v = 1; v <= 9; ++v) later.push_back(MakeRaw(std::to_string(v)));
  runner.Run(batch_, TimePoint(), [&](int) { return std::exchange(later, {}); });
  ExpectAnsweredOnce();
  ASSERT_EQ(model->shapes, (std::vector<Shape>{{10, 2}}));
  for (int v = 0; v <= 9; ++v) {
    ASSERT_TRUE(results_[v]->ok()) << v;
    EXPECT_EQ(Floats((*results_[v])->outputs[0].tensor),
              (std::vector<float>{v + 1.0f, v + 2.0f})) << v;
  }
  EXPECT_EQ(runner.input_pool_stats().allocated, 2u);
}

// A batch that mixes tensors in (not raw) takes the assembly path: the rows
// need every request to be pre-processed by the runner.
TEST_F(BatchRunnerTest, ABatchWithATensorRequestIsAssembledAsBefore) {
  auto model = std::make_shared<RecordingModel>();
  BatchRunner runner = MakeRunner(IntoRowsHooks(), model);
  AddRaw("1");
  AddRaw("x");
  batch_[1].request.raw.clear();
  batch_[1].request.inputs = {{"x", FloatTensor({1, 2}, 30)}};
  runner.Run(batch_, TimePoint());
  ExpectAnsweredOnce();
  ASSERT_TRUE(results_[1]->ok()) << results_[1]->status().ToString();
  EXPECT_EQ(Floats((*results_[1])->outputs[0].tensor), (std::vector<float>{31, 32}));
  EXPECT_EQ(Floats((*results_[0])->outputs[0].tensor), (std::vector<float>{2, 3}));
}

}  // namespace
}  // namespace inferd::scheduler
