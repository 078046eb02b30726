#include "repository/model_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::repository {
namespace {
namespace fs = std::filesystem;

class ModelStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("inferd_store_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const fs::path& rel, const std::string& text = "x") {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  fs::path dir_;
};

TEST_F(ModelStoreTest, ListsFoldersWithAConfigAndSkipsBadNames) {
  Touch("b/config.yaml");
  Touch("a/config.yaml");
  Touch("no_config/1/model.pt");
  Touch("bad\xff/config.yaml");
  Touch("loose_file");
  ModelStore store(dir_.string());
  ASSERT_TRUE(store.Check().ok());
  std::vector<std::string> skipped;
  EXPECT_EQ(store.ListModels(&skipped), std::vector<std::string>({"a", "b"}));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("not valid UTF-8"), std::string::npos);
}

TEST_F(ModelStoreTest, ReadsVersionsAndSizes) {
  Touch("m/config.yaml", "inputs: [{name: x, datatype: FP32, shape: [2]}]\n");
  Touch("m/2/model.pt", std::string(100, 'w'));
  Touch("m/10/model.pt", std::string(7, 'w'));
  Touch("m/01/model.pt");  // not a canonical version number
  Touch("m/0/model.pt");   // versions are positive
  Touch("m/x/model.pt");
  Touch("m/3/weights.bin");  // no model.pt
  ModelStore store(dir_.string());
  auto m = store.Read("m");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(m->config.has_value()) << m->config_error;
  ASSERT_EQ(m->versions.size(), 2u);
  EXPECT_EQ(m->versions[0].version, 2);
  EXPECT_EQ(m->versions[0].file_bytes, 100);
  EXPECT_EQ(m->versions[1].version, 10);
  EXPECT_EQ(m->versions[1].model_path, (dir_ / "m/10/model.pt").string());
}

TEST_F(ModelStoreTest, BadConfigIsKeptAsAnError) {
  Touch("m/config.yaml", "max_batch_size: nope\n");
  auto m = ModelStore(dir_.string()).Read("m");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->config.has_value());
  EXPECT_NE(m->config_error.find("max_batch_size"), std::string::npos);
}

TEST_F(ModelStoreTest, NamesThatEscapeOrOverflowNeverThrow) {
  ModelStore store(dir_.string());
  EXPECT_EQ(store.Read("../etc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Read(std::string(4000, 'n')).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Read("missing").status().code(), StatusCode::kNotFound);
  // A store path so deep that <store>/<name>/config.yaml passes PATH_MAX.
  std::string deep = dir_.string();
  while (deep.size() < 4200) deep += "/" + std::string(200, 'd');
  ModelStore too_deep(deep);
  EXPECT_EQ(too_deep.Check().code(), StatusCode::kNotFound);
  EXPECT_TRUE(too_deep.ListModels().empty());
  EXPECT_EQ(too_deep.Read(std::string(255, 'n')).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::repository
