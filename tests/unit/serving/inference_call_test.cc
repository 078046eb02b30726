// The shared request path against the real scheduler and repository, with
// the fake (echo) backend.
#include "serving/inference_call.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "backend/fake/fake_backend.h"

namespace inferd::serving {
namespace {

Services CountedBy(RequestMetrics* request_metrics) {
  Services s;
  s.request_metrics = request_metrics;
  return s;
}

namespace fs = std::filesystem;

class InferenceCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() / ("inferd_serving_test_" + std::to_string(::getpid()));
    fs::remove_all(store_);
    fs::create_directories(store_ / "echo" / "1");
    std::ofstream(store_ / "echo" / "config.yaml")
        << "max_batch_size: 4\ninputs: [{name: x, datatype: FP32, shape: [2]}]\n";
    std::ofstream(store_ / "echo" / "1" / "model.pt") << "fake";
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
    repository::ModelRepository::Options ro;
    ro.store_dir = store_.string();
    ro.backend = &backend_;
    ro.scheduler = scheduler_.get();
    repo_ = std::move(*repository::ModelRepository::Create(ro));
    repo_->StartEagerLoads();
    repo_->WaitForStartup(TimePoint::max());
  }
  void TearDown() override { fs::remove_all(store_); }

  Call MakeCall(Protocol protocol = Protocol::kGrpc) {
    Call call;
    call.protocol = protocol;
    call.received = Clock::Real()->Now();
    return call;
  }

  static scheduler::InferenceRequest Request() {
    scheduler::InferenceRequest r;
    r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
    return r;
  }

  // Submits and waits for the completion's status.
  Status Run(const Call& call, scheduler::InferenceRequest request) {
    auto model = ResolveModel(services_, call, "echo", "");
    EXPECT_TRUE(model.ok());
    std::promise<Status> result;
    Submit(services_, *model, std::move(request), call,
           [&](StatusOr<scheduler::InferenceResponse> r) { result.set_value(r.status()); });
    return result.get_future().get();
  }

  std::string Metrics() { return registry_.RenderPrometheus(); }

  fs::path store_;
  backend::FakeBackend backend_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<repository::ModelRepository> repo_;
  metrics::Registry registry_;
  RequestMetrics request_metrics_{&registry_};
  Services services_ = CountedBy(&request_metrics_);
};

TEST_F(InferenceCallTest, ResolvesAndCountsFailuresWithoutGrowingLabels) {
  services_.repository = repo_.get();
  Call call = MakeCall();
  EXPECT_TRUE(ResolveModel(services_, call, "echo", "1").ok());
  EXPECT_EQ(ResolveModel(services_, call, "nope", "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ResolveModel(services_, call, "echo", "7").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ResolveModel(services_, call, "echo", "x").status().code(),
            StatusCode::kInvalidArgument);
  std::string text = Metrics();
  EXPECT_NE(text.find(R"(inferd_requests_total{code="NOT_FOUND",model="",protocol="grpc"} 1)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(inferd_requests_total{code="NOT_FOUND",model="echo",protocol="grpc"} 1)"), std::string::npos);
  EXPECT_NE(text.find(R"(inferd_requests_total{code="INVALID_ARGUMENT",model="",protocol="grpc"} 1)"), std::string::npos);
}

TEST_F(InferenceCallTest, SubmitAnswersOnce) {
  services_.repository = repo_.get();
  EXPECT_TRUE(Run(MakeCall(), Request()).ok());
}

TEST_F(InferenceCallTest, TheTransportsDeadlineBoundsTheRequests) {
  services_.repository = repo_.get();
  Call call = MakeCall();
  call.deadline = Clock::Real()->Now() - std::chrono::milliseconds(1);
  EXPECT_EQ(Run(call, Request()).code(), StatusCode::kDeadlineExceeded);
}

TEST_F(InferenceCallTest, ACancelledCallIsDroppedBeforeCompute) {
  services_.repository = repo_.get();
  Call call = MakeCall();
  call.is_cancelled = [] { return true; };
  EXPECT_EQ(Run(call, Request()).code(), StatusCode::kCancelled);
}

TEST_F(InferenceCallTest, ARefusalAnswersOnTheCallingThread) {
  services_.repository = repo_.get();
  scheduler::InferenceRequest bad;
  bad.inputs = {{"wrong", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  auto model = ResolveModel(services_, MakeCall(), "echo", "");
  ASSERT_TRUE(model.ok());
  std::optional<Status> seen;
  Submit(services_, *model, std::move(bad), MakeCall(),
         [&](StatusOr<scheduler::InferenceResponse> r) { seen = r.status(); });
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inferd::serving
