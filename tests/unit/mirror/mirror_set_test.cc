// MirrorSet on the real request path (serving::Submit with the set as its
// tap) with the fake echo backend: a local candidate through the scheduler.
#include "mirror/mirror_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "backend/fake/fake_backend.h"
#include "unit/support/eventually.h"

namespace inferd::mirror {
namespace {

namespace fs = std::filesystem;

class MirrorSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() / ("inferd_mirror_test_" + std::to_string(::getpid()));
    fs::remove_all(store_);
    for (const char* name : {"a", "b"}) {
      fs::create_directories(store_ / name / "1");
      std::ofstream(store_ / name / "config.yaml")
          << "max_batch_size: 4\ninputs: [{name: x, datatype: FP32, shape: [2]}]\n"
          << "dynamic_batching: {calibrate: false}\n";
      std::ofstream(store_ / name / "1" / "model.pt") << "fake";
    }
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    so.calibrate = false;
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
    repository::ModelRepository::Options ro;
    ro.store_dir = store_.string();
    ro.backend = &backend_;
    ro.scheduler = scheduler_.get();
    repo_ = std::move(*repository::ModelRepository::Create(ro));
    repo_->StartEagerLoads();
    repo_->WaitForStartup(TimePoint::max());
    set_ = std::make_unique<MirrorSet>(MirrorSet::Options{repo_.get(), &registry_});
  }
  void TearDown() override {
    set_.reset();
    fs::remove_all(store_);
  }

  // Submits one request to `model` through the tap and waits for the client's answer.
  Status Run(const std::string& model) {
    serving::Services services;
    services.repository = repo_.get();
    services.tap = set_.get();
    serving::Call call;
    call.received = Clock::Real()->Now();
    auto handle = serving::ResolveModel(services, call, model, "");
    EXPECT_TRUE(handle.ok());
    scheduler::InferenceRequest r;
    r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
    std::promise<Status> result;
    serving::Submit(services, *handle, std::move(r), call,
                    [&](StatusOr<scheduler::InferenceResponse> a) { result.set_value(a.status()); });
    return result.get_future().get();
  }

  // The report once the mirror of `model` has no copy out (the candidate
  // answers on an executor or a client thread).
  MirrorReport Settled(const std::string& model) {
    EXPECT_TRUE(test_support::Eventually([&] {
      auto r = set_->Report(model);
      return r.ok() && r->in_flight == 0;
    }));
    return *set_->Report(model);
  }

  fs::path store_;
  backend::FakeBackend backend_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<repository::ModelRepository> repo_;
  metrics::Registry registry_;
  std::unique_ptr<MirrorSet> set_;
};

TEST_F(MirrorSetTest, ALocalCandidateAnswersThroughTheScheduler) {
  ASSERT_TRUE(set_->Set("a", {"b", 1.0, 4, 5000}).ok());
  // Each copy settles before the next request: copies take spare capacity
  // only, and one queued behind another is refused (no_spare_executor), which
  // a slow run (ASan) showed as 2 of 3 compared.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Run("a").ok());
    Settled("a");
  }
  ASSERT_TRUE(Run("b").ok());  // b has no mirror of its own
  MirrorReport r = Settled("a");
  EXPECT_EQ(r.candidate_kind, "local");
  EXPECT_EQ(r.seen, 3);
  EXPECT_EQ(r.mirrored, 3);
  EXPECT_EQ(r.comparison.compared, 3);  // echo against echo: equal
  EXPECT_EQ(r.comparison.max_abs_error, 0);
  EXPECT_EQ(r.candidate_errors, 0);
  EXPECT_FALSE(set_->Report("b").ok());
}

TEST_F(MirrorSetTest, UnknownModelsAndBadCandidatesAreRefused) {
  EXPECT_EQ(set_->Set("nope", {"b", 0.1, 4, 5000}).code(), StatusCode::kNotFound);
  EXPECT_EQ(set_->Set("a", {"nope", 0.1, 4, 5000}).code(), StatusCode::kNotFound);
  EXPECT_EQ(set_->Set("a", {"b:x", 0.1, 4, 5000}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set_->Set("a", {"http://127.0.0.1:1/predictions/b", 0.1, 4, 5000}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(set_->Set("a", {"", 0.1, 4, 5000}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set_->Remove("a").code(), StatusCode::kNotFound);
}

TEST_F(MirrorSetTest, ReplacedAndRemoved) {
  ASSERT_TRUE(set_->Set("a", {"b", 1.0, 4, 5000}).ok());
  ASSERT_TRUE(Run("a").ok());
  Settled("a");
  ASSERT_TRUE(set_->Set("a", {"b:1", 0.0, 4, 5000}).ok());  // figures start again
  ASSERT_TRUE(Run("a").ok());
  MirrorReport r = Settled("a");
  EXPECT_EQ(r.mirrored, 0);
  EXPECT_EQ(r.seen, 1);
  ASSERT_TRUE(set_->Remove("a").ok());
  EXPECT_EQ(set_->Report("a").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(Run("a").ok());
}

TEST_F(MirrorSetTest, AnUnreachableRemoteIsACandidateError) {
  // Port 1 on the loopback refuses connections.
  ASSERT_TRUE(set_->Set("a", {"http://127.0.0.1:1/v2/models/b", 1.0, 4, 5000}).ok());
  ASSERT_TRUE(Run("a").ok());
  MirrorReport r = Settled("a");
  EXPECT_EQ(r.candidate_kind, "remote");
  EXPECT_EQ(r.candidate_errors, 1);
  EXPECT_NE(r.last_candidate_error.find("cannot reach"), std::string::npos)
      << r.last_candidate_error;
}

}  // namespace
}  // namespace inferd::mirror
