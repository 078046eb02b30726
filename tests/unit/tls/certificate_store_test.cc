#include "tls/certificate_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace inferd::tls {
namespace {

namespace fs = std::filesystem;

// Certificates made by the openssl command (Debian's openssl package), as an operator would.
class CertificateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("inferd-tls-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    MakePair("a");
    MakePair("b");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void MakePair(const std::string& name) {
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost"
                            " -keyout " + Path(name + ".key") + " -out " + Path(name + ".crt") +
                            " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Copy(const std::string& from, const std::string& to) {
    fs::copy_file(Path(from), Path(to + ".tmp"), fs::copy_options::overwrite_existing);
    fs::rename(Path(to + ".tmp"), Path(to));
  }

  fs::path dir_;
};

TEST_F(CertificateStoreTest, LoadsAMatchingPair) {
  auto store = CertificateStore::Create({Path("a.crt"), Path("a.key"), std::chrono::milliseconds(0)});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_NE((*store)->Current(), nullptr);
  EXPECT_EQ((*store)->generation(), 1);
}

TEST_F(CertificateStoreTest, RefusesMissingOrMismatchedFiles) {
  auto missing = CertificateStore::Create({Path("none.crt"), Path("a.key"), {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.crt"), std::string::npos);
  auto mismatched = CertificateStore::Create({Path("a.crt"), Path("b.key"), {}});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("b.key"), std::string::npos);
  auto half = CertificateStore::Create({Path("a.crt"), "", {}});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("--tls-key"), std::string::npos);
}

TEST_F(CertificateStoreTest, ReloadKeepsTheContextInForceUntilThePairMatches) {
  Copy("a.crt", "server.crt");
  Copy("a.key", "server.key");
  auto store = CertificateStore::Create(
      {Path("server.crt"), Path("server.key"), std::chrono::milliseconds(0)});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto first = (*store)->Current();

  Copy("b.crt", "server.crt");  // the certificate first: no longer matches the key
  EXPECT_FALSE((*store)->Reload().ok());
  EXPECT_EQ((*store)->Current(), first);
  EXPECT_EQ((*store)->generation(), 1);

  Copy("b.key", "server.key");  // then the key
  ASSERT_TRUE((*store)->Reload().ok());
  EXPECT_NE((*store)->Current(), first);
  EXPECT_EQ((*store)->generation(), 2);
}

}  // namespace
}  // namespace inferd::tls
