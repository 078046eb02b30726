// The repository's registration, names, lifecycle states and management calls.
// The cache (lazy loads, budget, eviction) is in model_cache_test.cc.
#include "repository/model_repository.h"

#include "unit/repository/repository_fixture.h"

namespace inferd::repository {
namespace {

using testing::Acquired;
using testing::kConfig;
using testing::RepositoryTest;

scheduler::InferenceRequest Request() {
  scheduler::InferenceRequest r;
  r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  return r;
}

using ModelRepositoryTest = RepositoryTest;

TEST_F(ModelRepositoryTest, ServesTheHighestVersionByDefault) {
  AddModel("a", kConfig, {1, 3, 2});
  auto& repo = Open();
  auto h = repo.Get("a");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ((*h)->version(), 3);
  auto v1 = repo.Get("a", 1);
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ((*v1)->version(), 1);
  auto v9 = repo.Get("a", 9);
  EXPECT_EQ(v9.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(v9.status().message(), "model 'a' has no version 9; versions: 1, 2, 3");
  EXPECT_TRUE(repo.AllReady());
}

TEST_F(ModelRepositoryTest, UnknownModelNamesTheKnownOnes) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  auto h = repo.Get("nope");
  ASSERT_EQ(h.status().code(), StatusCode::kNotFound);
  EXPECT_NE(h.status().message().find("unknown model 'nope' (known models: a)"), std::string::npos);
}

TEST_F(ModelRepositoryTest, ABrokenModelIsReportedAndOthersStillServe) {
  AddModel("good", kConfig, {1});
  AddModel("bad_config", "max_batch_size: -3\n" + std::string(kConfig), {1});
  AddModel("no_versions", kConfig, {});
  AddModel("bad_file", kConfig, {1}, 0, "fail: not TorchScript");
  auto& repo = Open();
  EXPECT_TRUE(repo.Get("good").ok());
  auto bad = repo.Get("bad_config");
  ASSERT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bad.status().message().find("max_batch_size"), std::string::npos);
  auto st = repo.GetStatus("no_versions");
  ASSERT_TRUE(st.ok());
  EXPECT_NE(st->error.find("no version folder"), std::string::npos);
  auto file = repo.GetStatus("bad_file");
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->versions.size(), 1u);
  EXPECT_EQ(file->versions[0].state, ModelState::kUnavailable);
  EXPECT_NE(file->versions[0].error.find("fake load failure"), std::string::npos);
  EXPECT_EQ(file->state, ModelState::kUnavailable);
  // A failed model answers its error; requests do not retry the load.
  const size_t loads = backend_.loads();
  auto again = AcquireNow("bad_file");
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("failed to load"), std::string::npos);
  EXPECT_EQ(backend_.loads(), loads);
  EXPECT_FALSE(repo.AllReady());
  EXPECT_EQ(repo.List().size(), 4u);
}

TEST_F(ModelRepositoryTest, UnloadAndLoadAgain) {
  AddModel("a", kConfig, {1});
  AddModel("b", kConfig, {1});
  auto o = Defaults();
  o.models = {"a"};
  auto& repo = Open(o);
  EXPECT_TRUE(repo.Get("a").ok());
  EXPECT_EQ(repo.Get("b").status().code(), StatusCode::kUnavailable) << "listed, not loaded";
  auto not_named = AcquireNow("b");
  EXPECT_EQ(not_named.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(not_named.status().message().find("--models did not name it"), std::string::npos);
  auto held = *repo.Get("a");
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_EQ(repo.Get("a").status().code(), StatusCode::kUnavailable);
  auto unloaded = AcquireNow("a");
  EXPECT_NE(unloaded.status().message().find("unloaded through the management API"),
            std::string::npos)
      << unloaded.status().message();
  EXPECT_EQ(held->Enqueue(Request(), [](StatusOr<scheduler::InferenceResponse>) {}).code(),
            StatusCode::kUnavailable)
      << "a retired version refuses new requests";
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kUnloading) << "a handle is still held";
  held.reset();
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kUnavailable);
  EXPECT_EQ(repo.memory().resident, 0);
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_TRUE(repo.Get("a").ok());
  ASSERT_TRUE(repo.Load("b").ok());
  EXPECT_TRUE(repo.Get("b").ok());
  EXPECT_EQ(repo.Load("../etc").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(repo.Load("zzz").code(), StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, ALoadAddsAModelPutInTheStoreLater) {
  auto& repo = Open();
  EXPECT_TRUE(repo.List().empty());
  AddModel("late", kConfig, {1});
  ASSERT_TRUE(repo.Load("late").ok());
  EXPECT_TRUE(repo.Get("late").ok());
  EXPECT_EQ(repo.List().size(), 1u);
}

TEST_F(ModelRepositoryTest, NamesThatCannotBeModelsAreRefusedAndNeverAdded) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  const std::vector<std::string> bad = {"",
                                        ".",
                                        "..",
                                        "../a",
                                        "a/b",
                                        "a\\b",
                                        std::string("a\0b", 3),
                                        std::string(300, 'n'),
                                        "\xff\xfe",
                                        "\xc0\xaf",
                                        "\xed\xa0\x80",
                                        "caf\xc3",
                                        "line\nbreak",
                                        "\x7f",
                                        "\xc2\x85"};
  for (const auto& name : bad) {
    SCOPED_TRACE(::testing::PrintToString(name));
    EXPECT_EQ(repo.Get(name).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(repo.GetStatus(name).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(AcquireNow(name).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(repo.Load(name).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(repo.Unload(name).code(), StatusCode::kInvalidArgument);
  }
  // Valid names the store does not hold: 404, and still no entry.
  for (const std::string& name :
       std::vector<std::string>{"nope", "caf\xc3\xa9", std::string(255, 'n')}) {
    EXPECT_EQ(repo.Get(name).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(AcquireNow(name).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(repo.Load(name).code(), StatusCode::kNotFound);
    EXPECT_EQ(repo.Unload(name).code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(repo.List().size(), 1u);
}

TEST_F(ModelRepositoryTest, StoreFoldersWithBadNamesAreSkipped) {
  AddModel("ok", kConfig, {1});
  AddModel("bad\xff", kConfig, {1});
  AddModel("has\nnewline", kConfig, {1});
  auto& repo = Open();
  ASSERT_EQ(repo.List().size(), 1u);
  EXPECT_EQ(repo.List()[0].name, "ok");
}

TEST_F(ModelRepositoryTest, RequestsDuringStartUpWaitForTheLoad) {
  AddModel("a", kConfig, {1});
  auto& repo = Open(Defaults(), /*start=*/false);
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kUnavailable) << "registered before loading";
  EXPECT_FALSE(repo.AllReady());
  backend_.CloseLoadGate();
  repo.StartEagerLoads();
  backend_.WaitForLoads(1);
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kLoading);
  EXPECT_FALSE(repo.AllReady());
  Acquired early;
  repo.Acquire("a", std::nullopt, TimePoint::max(), early.callback());
  EXPECT_FALSE(early.ready()) << "a request to a model being loaded waits";
  backend_.OpenLoadGate();
  ASSERT_TRUE(early.get().ok());
  repo.WaitForStartup(TimePoint::max());
  EXPECT_TRUE(repo.AllReady());
  EXPECT_EQ(backend_.loads(), 1u);
}

TEST_F(ModelRepositoryTest, UnloadWhileRequestsAreQueued) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  auto handle = *repo.Get("a");
  auto model = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(model);
  model->CloseGate();
  std::vector<std::promise<StatusOr<scheduler::InferenceResponse>>> answers(3);
  for (auto& p : answers) {
    ASSERT_TRUE(
        handle
            ->Enqueue(Request(),
                      [&p](StatusOr<scheduler::InferenceResponse> r) { p.set_value(std::move(r)); })
            .ok());
  }
  model->WaitForCalls(1);  // one runs, two wait in the queue
  handle.reset();
  ASSERT_TRUE(repo.Unload("a").ok());
  const int releases = Releases();  // the unload's own trim is counted by now
  auto during = repo.GetStatus("a");
  EXPECT_EQ(during->state, ModelState::kUnloading);
  EXPECT_GT(during->resident_bytes, 0) << "its memory is held until the requests end";
  EXPECT_EQ(repo.Get("a").status().code(), StatusCode::kUnavailable);
  model->OpenGate();
  model.reset();
  for (auto& p : answers) EXPECT_TRUE(p.get_future().get().ok()) << "queued requests finish";
  // The release runs when the last completion is destroyed, just after it
  // ran; it hands the memory back (release_memory) on a load thread.
  WaitForRelease(releases);
  EXPECT_EQ(repo.memory().resident, 0);
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kUnavailable);
}

// Issue 9: a completion that dropped the last handle of an unloaded model
// re-entered the scheduler's mutex (ServedModel's destructor called
// RemoveModel while the executor destroyed expired requests under that
// mutex): a deadlock. The release now only touches the repository.
TEST_F(ModelRepositoryTest, ACompletionMayDropTheLastHandleOfAnUnloadedModel) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  auto handle = *repo.Get("a");
  auto model = backend_.LastModel(ModelPath("a"));
  model->CloseGate();
  std::promise<Status> first, second;
  ASSERT_TRUE(handle
                  ->Enqueue(Request(),
                            [&first](StatusOr<scheduler::InferenceResponse> r) {
                              first.set_value(r.status());
                            })
                  .ok());
  model->WaitForCalls(1);  // the executor is busy with the first request
  auto expiring = Request();
  expiring.deadline = clock_.Now() + std::chrono::milliseconds(1);
  ASSERT_TRUE(handle
                  ->Enqueue(std::move(expiring),
                            [&second](StatusOr<scheduler::InferenceResponse> r) {
                              second.set_value(r.status());
                            })
                  .ok());
  handle.reset();
  ASSERT_TRUE(repo.Unload("a").ok());  // only the queued completions hold the version now
  const int releases = Releases();
  clock_.Advance(std::chrono::milliseconds(5));
  model->OpenGate();
  model.reset();
  EXPECT_TRUE(first.get_future().get().ok());
  EXPECT_EQ(second.get_future().get().code(), StatusCode::kDeadlineExceeded);
  // The expired request's completion is destroyed under the scheduler's mutex;
  // it drops the last handle, whose release reaches the repository (and its
  // trim), not the scheduler.
  WaitForRelease(releases);
  EXPECT_EQ(repo.memory().resident, 0);
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  ASSERT_TRUE(repo.Load("a").ok()) << "the scheduler still takes new models";
}

TEST_F(ModelRepositoryTest, AReloadServesTheOldVersionUntilTheNewOneIsReady) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  auto old = *repo.Get("a");
  backend_.CloseLoadGate();
  Status reload_status;
  std::promise<void> reloaded;
  repo.LoadAsync("a", [&](Status st) {
    reload_status = st;
    reloaded.set_value();
  });
  backend_.WaitForLoads(2);
  {
    auto during = repo.Get("a");
    ASSERT_TRUE(during.ok()) << "READY while the reload runs";
    EXPECT_EQ(during->get(), old.get());
  }
  backend_.OpenLoadGate();
  reloaded.get_future().get();
  ASSERT_TRUE(reload_status.ok());
  EXPECT_NE(repo.Get("a")->get(), old.get());
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kReady);
  // The old instance is retired: what a request through it gets is in
  // successor_test.cc.
}

}  // namespace
}  // namespace inferd::repository
