#include "repository/model_repository.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backend/fake/fake_backend.h"

namespace inferd::repository {
namespace {
namespace fs = std::filesystem;

constexpr char kConfig[] = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";

class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() / ("inferd_repo_test_" + std::to_string(::getpid()));
    fs::remove_all(store_);
    fs::create_directories(store_);
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
  }
  void TearDown() override { fs::remove_all(store_); }

  void AddModel(const std::string& name, const std::string& config, std::vector<int> versions) {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream(store_ / name / std::to_string(v) / "model.pt") << "fake";
    }
  }

  std::unique_ptr<ModelRepository> Open(std::vector<std::string> models = {}) {
    ModelRepository::Options o;
    o.store_dir = store_.string();
    o.models = std::move(models);
    o.backend = &backend_;
    o.scheduler = scheduler_.get();
    auto repo = ModelRepository::Create(o);
    EXPECT_TRUE(repo.ok()) << repo.status().ToString();
    (*repo)->LoadInitial();
    return std::move(*repo);
  }

  fs::path store_;
  backend::FakeBackend backend_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
};

TEST_F(ModelRepositoryTest, ServesTheHighestVersionByDefault) {
  AddModel("a", kConfig, {1, 3, 2});
  auto repo = Open();
  auto h = repo->Get("a");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ((*h)->version(), 3);
  auto v1 = repo->Get("a", 1);
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ((*v1)->version(), 1);
  auto v9 = repo->Get("a", 9);
  EXPECT_EQ(v9.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(repo->AllReady());
}

TEST_F(ModelRepositoryTest, UnknownModelNamesTheKnownOnes) {
  AddModel("a", kConfig, {1});
  auto repo = Open();
  auto h = repo->Get("nope");
  ASSERT_EQ(h.status().code(), StatusCode::kNotFound);
  EXPECT_NE(h.status().message().find("unknown model 'nope' (known models: a)"), std::string::npos);
}

TEST_F(ModelRepositoryTest, ABrokenModelIsReportedAndOthersStillServe) {
  AddModel("good", kConfig, {1});
  AddModel("bad_config", "max_batch_size: -3\n" + std::string(kConfig), {1});
  AddModel("no_versions", kConfig, {});
  auto repo = Open();
  EXPECT_TRUE(repo->Get("good").ok());
  auto bad = repo->Get("bad_config");
  ASSERT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bad.status().message().find("max_batch_size"), std::string::npos);
  auto st = repo->GetStatus("no_versions");
  ASSERT_TRUE(st.ok());
  EXPECT_NE(st->error.find("no version folder"), std::string::npos);
  EXPECT_FALSE(repo->AllReady());
  EXPECT_EQ(repo->List().size(), 3u);
}

TEST_F(ModelRepositoryTest, UnloadAndLoadAgain) {
  AddModel("a", kConfig, {1});
  AddModel("b", kConfig, {1});
  auto repo = Open({"a"});
  EXPECT_TRUE(repo->Get("a").ok());
  EXPECT_EQ(repo->Get("b").status().code(), StatusCode::kUnavailable) << "listed, not loaded";
  auto held = *repo->Get("a");
  ASSERT_TRUE(repo->Unload("a").ok());
  EXPECT_EQ(repo->Get("a").status().code(), StatusCode::kUnavailable);
  scheduler::InferenceRequest r;
  r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  EXPECT_EQ(held->Enqueue(std::move(r), [](StatusOr<scheduler::InferenceResponse>) {}).code(),
            StatusCode::kUnavailable)
      << "a retired version refuses new requests";
  ASSERT_TRUE(repo->Load("a").ok());
  EXPECT_TRUE(repo->Get("a").ok());
  ASSERT_TRUE(repo->Load("b").ok());
  EXPECT_TRUE(repo->Get("b").ok());
  EXPECT_EQ(repo->Load("../etc").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(repo->Load("zzz").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::repository
