// Registry and BackendSet: registration by name, capabilities checked against
// a config with the file and key named, Load picked by config.backend.
#include "backend/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/backend_set.h"

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;

// A model that answers its own backend's tag, so a test sees which backend
// loaded it.
class TaggedModel : public Model {
 public:
  explicit TaggedModel(std::string tag) : tag_(std::move(tag)) {}
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>&) override {
    return std::vector<NamedTensor>{};
  }
  int64_t WeightBytes() const override { return static_cast<int64_t>(tag_.size()); }

 private:
  std::string tag_;
};

class TaggedBackend : public Backend {
 public:
  TaggedBackend(std::string tag, bool warm_up) : tag_(std::move(tag)), warm_up_(warm_up) {}
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions&) override {
    return std::shared_ptr<Model>(std::make_shared<TaggedModel>(tag_ + (warm_up_ ? "+" : "")));
  }
  void InitExecutorThread(const std::vector<int>&, int num_threads) override {
    threads_seen += num_threads;
  }
  static inline int threads_seen = 0;

 private:
  std::string tag_;
  bool warm_up_;
};

BackendFactory Factory(std::string tag) {
  return [tag](const CreateOptions& o) -> StatusOr<std::unique_ptr<Backend>> {
    return std::unique_ptr<Backend>(new TaggedBackend(tag, o.warm_up));
  };
}

// This test binary links no real backend: two test doubles take the names.
Capabilities TorchLike() {
  Capabilities c;
  c.model_files = {"model.pt"};
  c.precisions = {config::Precision::kFp32, config::Precision::kBf16};
  c.variants = true;
  return c;
}
Capabilities TreeLike() {
  Capabilities c;
  c.model_files = {"model.json", "model.ubj"};
  return c;
}
const bool kTorchRegistered = Registry::Register("torchscript", TorchLike(), Factory("torch"));
const bool kTreeRegistered = Registry::Register("xgboost", TreeLike(), Factory("xg"));

TEST(RegistryTest, RegistersOnceByName) {
  EXPECT_TRUE(kTorchRegistered);
  EXPECT_TRUE(kTreeRegistered);
  EXPECT_FALSE(Registry::Register("xgboost", TreeLike(), Factory("again")));
  EXPECT_EQ(Registry::Names(), (std::vector<std::string>{"torchscript", "xgboost"}));
  ASSERT_NE(Registry::Find("xgboost"), nullptr);
  EXPECT_EQ(Registry::Find("xgboost")->model_files.front(), "model.json");
  EXPECT_EQ(Registry::Find("onnxruntime"), nullptr);
  config::ModelConfig c;
  c.backend = config::BackendKind::kXgboost;
  EXPECT_EQ(Registry::ModelFiles(c), (std::vector<std::string>{"model.json", "model.ubj"}));
  c.backend = config::BackendKind::kOnnxruntime;  // not in this binary
  EXPECT_EQ(Registry::ModelFiles(c), (std::vector<std::string>{"model.pt"}));
}

TEST(RegistryTest, CreateUnknownNameSaysWhatIsBuilt) {
  auto b = Registry::Create("onnxruntime");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(b.status().message(), HasSubstr("it has: torchscript, xgboost"));
  EXPECT_TRUE(Registry::Create("xgboost").ok());
}

TEST(RegistryTest, CheckConfigNamesFileAndKeyOfWhatTheBackendLacks) {
  config::ModelConfig c;
  c.backend = config::BackendKind::kXgboost;
  EXPECT_TRUE(Registry::CheckConfig(c, "s/m/config.yaml").ok());
  c.max_batch_size = 64;  // batching is supported
  EXPECT_TRUE(Registry::CheckConfig(c, "s/m/config.yaml").ok());

  c.precision = config::Precision::kBf16;
  Status s = Registry::CheckConfig(c, "s/m/config.yaml");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("s/m/config.yaml: precision: the xgboost backend supports "
                                     "fp32, got 'bf16'"));
  c.precision = config::Precision::kFp32;
  c.variants = config::Variants::kFrozen;
  EXPECT_THAT(Registry::CheckConfig(c, "s/m/config.yaml").message(),
              HasSubstr("s/m/config.yaml: variants: the xgboost backend has no execution "
                        "variants; expected auto, got 'frozen'"));

  c.backend = config::BackendKind::kTorchscript;  // has variants and bf16
  c.precision = config::Precision::kBf16;
  EXPECT_TRUE(Registry::CheckConfig(c, "s/m/config.yaml").ok());
  c.backend = config::BackendKind::kOnnxruntime;  // not registered: left to the load
  EXPECT_TRUE(Registry::CheckConfig(c, "s/m/config.yaml").ok());
}

TEST(BackendSetTest, LoadPicksTheConfigsBackendAndRefusesOnesNotBuilt) {
  BackendSet::Options options;
  options.create.warm_up = false;
  auto set = BackendSet::Create(options);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  LoadOptions lo;
  lo.config.name = "m";
  lo.config.backend = config::BackendKind::kXgboost;
  auto x = (*set)->Load(lo);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ((*x)->WeightBytes(), 2);  // "xg": made by the xgboost double, warm-up off
  lo.config.backend = config::BackendKind::kTorchscript;
  auto t = (*set)->Load(lo);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->WeightBytes(), 5);  // "torch"
  lo.config.backend = config::BackendKind::kOnnxruntime;
  auto o = (*set)->Load(lo);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(o.status().message(),
              HasSubstr("model 'm': backend 'onnxruntime' is not built into this binary"));

  TaggedBackend::threads_seen = 0;
  (*set)->InitExecutorThread({}, 3);
  EXPECT_EQ(TaggedBackend::threads_seen, 6) << "every backend sets up the executor thread";
}

}  // namespace
}  // namespace inferd::backend
