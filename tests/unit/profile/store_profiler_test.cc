// The profiler's store handling and error reporting, on the fake backend (the
// figures of real models are checked end to end in tests/e2e/test_plan_profile.py).
#include "profile/store_profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/fake/fake_backend.h"
#include "plan/model_list.h"
#include "profile/profile_command.h"

namespace inferd::profile {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kConfig =
    "max_batch_size: 4\ninputs: [{name: x, datatype: FP32, shape: [16]}]\n";

class StoreProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ =
        fs::path(::testing::TempDir()) /
        ("profile-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(store_);
    fs::create_directories(store_);
  }
  void TearDown() override { fs::remove_all(store_); }

  void AddModel(const std::string& name, const std::string& config, std::vector<int> versions) {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream(store_ / name / std::to_string(v) / "model.pt") << "weights";
    }
  }

  fs::path store_;
  backend::FakeBackend backend_;
};

TEST_F(StoreProfilerTest, ListsFoldersWithAConfigSorted) {
  AddModel("b", kConfig, {1});
  AddModel("a", kConfig, {1});
  fs::create_directories(store_ / "not_a_model");
  auto models = ListStoreModels(store_.string());
  ASSERT_TRUE(models.ok()) << models.status().message();
  EXPECT_THAT(*models, ElementsAre("a", "b"));
  fs::remove_all(store_);
  fs::create_directories(store_);
  EXPECT_THAT(ListStoreModels(store_.string()).status().message(), HasSubstr("holds no model"));
  EXPECT_EQ(ListStoreModels((store_ / "missing").string()).status().code(), StatusCode::kNotFound);
}

TEST_F(StoreProfilerTest, ProfilesTheHighestVersionWithOneRequestOfTheConfiguredShape) {
  AddModel("a", kConfig, {1, 3, 2});
  ProfileOptions options;
  options.warmup_runs = 2;
  options.runs = 5;
  auto p = ProfileModel(backend_, store_.string(), "a", options);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->version, 3);
  EXPECT_EQ(p->inputs, "x [1,16]");
  EXPECT_GE(p->core_ms, p->core_ms_min);
  EXPECT_LE(p->core_ms, p->core_ms_max);
  EXPECT_EQ(p->memory_bytes, std::max(p->weight_bytes, p->resident_bytes));
}

TEST_F(StoreProfilerTest, EveryFailingModelIsNamedAndTheOthersStillProfiled) {
  AddModel("good", kConfig, {1});
  AddModel("bad_config", "max_batch_size: x\n", {1});
  AddModel("no_version", kConfig, {});
  std::vector<std::string> done;
  auto r = ProfileModels(backend_, store_.string(), {"bad_config", "good", "no_version"}, {},
                         [&](const ModelProfile& p) { done.push_back(p.name); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("model 'bad_config'"));
  EXPECT_THAT(r.status().message(), HasSubstr("max_batch_size"));
  EXPECT_THAT(r.status().message(), HasSubstr("model 'no_version': no version folder"));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("'good'")));
  EXPECT_THAT(done, ElementsAre("good"));
}

TEST_F(StoreProfilerTest, TheModelsFileReadsBackAsWhatWasMeasured) {
  ModelProfile a;
  a.name = "a";
  a.version = 1;
  a.inputs = "x [1,16]";
  a.core_ms = 12.34567;
  a.memory_bytes = 1000;  // rounded up to 1Ki
  ModelProfile b = a;
  b.name = "b";
  b.core_ms = 0.5;
  b.memory_bytes = 3 * 1024 * 1024;
  ProfileCommandOptions options;
  options.store_dir = "store";
  const std::string text = FormatModelsFile({a, b}, {40, 2.5}, options);
  auto models = plan::ParseModelList(text, "models.yaml");
  ASSERT_TRUE(models.ok()) << models.status().message() << "\n" << text;
  ASSERT_EQ(models->size(), 2u);
  EXPECT_EQ((*models)[0].name, "a");
  EXPECT_DOUBLE_EQ((*models)[0].rps, 40);
  EXPECT_DOUBLE_EQ((*models)[0].core_ms, 12.3457);
  EXPECT_EQ((*models)[0].memory_bytes, 1024);
  EXPECT_DOUBLE_EQ((*models)[1].rps, 2.5);
  EXPECT_EQ((*models)[1].memory_bytes, 3 * 1024 * 1024);
}

TEST_F(StoreProfilerTest, RpsMustCoverTheStoreAndNameOnlyItsModels) {
  AddModel("a", kConfig, {1});
  AddModel("b", kConfig, {1});
  plan::PlanCommandOptions plan;
  plan.node_cores = 16;
  plan.node_memory = "64Gi";
  ProfileCommandOptions options;
  options.store_dir = store_.string();
  options.rps_file = (store_ / "rps.yaml").string();
  std::ofstream(options.rps_file) << "a: 10\n";
  std::ostringstream out, err;
  EXPECT_EQ(RunProfiledPlan(options, plan, backend_, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("no peak req/s for b"));

  std::ofstream(options.rps_file) << "a: 10\nb: 1\nc: 5\n";
  err.str("");
  EXPECT_EQ(RunProfiledPlan(options, plan, backend_, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("rps.yaml:3: model 'c' is not in the model store"));

  std::ofstream(options.rps_file) << "a: 10\n";
  options.default_rps = 1;
  options.save_models = (store_ / "models.yaml").string();
  err.str("");
  EXPECT_EQ(RunProfiledPlan(options, plan, backend_, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("lower bound"));
  auto saved = plan::LoadModelList(options.save_models);
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_EQ(saved->size(), 2u);
  EXPECT_DOUBLE_EQ((*saved)[0].rps, 10);
  EXPECT_DOUBLE_EQ((*saved)[1].rps, 1);
}

}  // namespace
}  // namespace inferd::profile
