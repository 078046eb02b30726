#include "auth/key_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace inferd::auth {
namespace {

namespace fs = std::filesystem;

class KeyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("inferd-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "keys.yaml").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // As operators are told to: write another file, rename it over.
  void Write(const std::string& text) {
    const std::string tmp = path_ + ".tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, path_);
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(KeyStoreTest, CreateFailsOnAMissingOrBadFile) {
  auto missing = KeyStore::Create({path_, std::chrono::milliseconds(0)});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read"), std::string::npos);
  Write("inference: not-a-list-0123456789\n");
  auto bad = KeyStore::Create({path_, std::chrono::milliseconds(0)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be a list"), std::string::npos);
}

TEST_F(KeyStoreTest, ReloadSwapsTheKeysAndKeepsThemOnABadFile) {
  Write("inference: [first-key-0123456789]\n");
  auto store = KeyStore::Create({path_, std::chrono::milliseconds(0)});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  KeyStore& keys = **store;
  EXPECT_EQ(keys.generation(), 1);
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer first-key-0123456789"), Decision::kAllow);

  Write("inference: [first-key-0123456789, second-key-0123456789]\n");
  ASSERT_TRUE(keys.Reload().ok());
  EXPECT_EQ(keys.generation(), 2);
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer second-key-0123456789"), Decision::kAllow);

  // A broken version keeps the keys in force (both still valid).
  Write("inference: [second-key-0123456789\n");
  Status bad = keys.Reload();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("not valid YAML"), std::string::npos);
  EXPECT_EQ(keys.generation(), 2);
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer first-key-0123456789"), Decision::kAllow);

  fs::remove(path_);  // a missing file too
  EXPECT_FALSE(keys.Reload().ok());
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer second-key-0123456789"), Decision::kAllow);

  Write("inference: [second-key-0123456789]\n");
  ASSERT_TRUE(keys.Reload().ok());
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer first-key-0123456789"),
            Decision::kUnauthenticated);
  EXPECT_EQ(keys.Authorize(Kind::kInference, "Bearer second-key-0123456789"), Decision::kAllow);
}

TEST_F(KeyStoreTest, TheWatcherFollowsTheFile) {
  Write("inference: [first-key-0123456789]\n");
  auto store = KeyStore::Create({path_, std::chrono::milliseconds(10)});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Write("management: [admin-key-0123456789]\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*store)->generation() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ((*store)->generation(), 2);
  EXPECT_EQ((*store)->Authorize(Kind::kManagement, "Bearer admin-key-0123456789"),
            Decision::kAllow);
  EXPECT_EQ((*store)->Authorize(Kind::kInference, "Bearer first-key-0123456789"),
            Decision::kUnauthenticated);
}

}  // namespace
}  // namespace inferd::auth
