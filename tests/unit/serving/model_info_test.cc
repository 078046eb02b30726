#include "serving/model_info.h"

#include <gtest/gtest.h>

namespace inferd::serving {
namespace {

using repository::ModelState;
using repository::ModelStatus;

ModelStatus Echo() {
  ModelStatus s;
  s.name = "echo";
  config::ModelConfig c;
  c.name = "echo";
  c.max_batch_size = 4;
  c.inputs = {{"x", DataType::kFp32, {3, -1}, std::nullopt}};
  c.outputs = {{"y", DataType::kInt64, {}, std::nullopt}};
  s.config = c;
  repository::VersionStatus v1, v2;
  v1.version = 1;
  v1.state = ModelState::kReady;
  v1.resident = true;
  v1.footprint.bytes = 4096;
  v2.version = 2;
  v2.error = "model.pt: bad magic";
  s.versions = {v1, v2};
  return s;
}

TEST(DescribeModel, DefaultVersionWithEveryVersionListed) {
  auto m = DescribeModel(Echo(), std::nullopt);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->versions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(m->platform, "pytorch_torchscript");
  EXPECT_EQ(m->max_batch_size, 4);
  ASSERT_EQ(m->inputs.size(), 1u);
  EXPECT_EQ(m->inputs[0].shape, (std::vector<int64_t>{-1, 3, -1}));
  EXPECT_EQ(m->outputs[0].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(m->state, ModelState::kReady);  // the highest ready version
  EXPECT_EQ(m->error, "");
}

TEST(DescribeModel, OneVersion) {
  auto m = DescribeModel(Echo(), 2);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->versions, (std::vector<int64_t>{2}));
  EXPECT_EQ(m->state, ModelState::kUnavailable);
  EXPECT_EQ(m->error, "model.pt: bad magic");
  auto missing = DescribeModel(Echo(), 5);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "model 'echo' has no version 5; versions: 1, 2");
}

TEST(RepositoryIndex, EveryVersionOrOnlyReadyOnes) {
  ModelStatus broken;
  broken.name = "broken";
  broken.error = "config.yaml: bad";
  auto all = RepositoryIndex({Echo(), broken}, false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].version, "2");
  EXPECT_EQ(all[1].reason, "model.pt: bad magic");
  EXPECT_EQ(all[0].bytes, 4096) << "resident";
  EXPECT_EQ(all[1].bytes, 0);
  EXPECT_FALSE(all[2].footprint.has_value());
  EXPECT_EQ(all[2].name, "broken");
  EXPECT_EQ(all[2].version, "");
  auto ready = RepositoryIndex({Echo(), broken}, true);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].state, ModelState::kReady);
}

TEST(ServerExtensions, NamesWhatIsImplemented) {
  EXPECT_EQ(ServerExtensions(),
            (std::vector<std::string>{"binary_tensor_data", "model_repository"}));
}

}  // namespace
}  // namespace inferd::serving
