// FakeTree: a temporary directory standing in for / in tests (fake
// /proc/self/cgroup, fake cgroup mounts, fake model stores). Removed with
// everything under it on destruction. Not thread-safe.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace inferd::topology::testing {

class FakeTree {
 public:
  FakeTree() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "inferd-topo-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    root_ = tmpl;
  }
  ~FakeTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  // Writes `text` to root/relative, creating parent directories.
  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::path p = root_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void MakeDir(const std::string& relative) const {
    std::filesystem::create_directories(root_ / relative);
  }
  std::string Path(const std::string& relative = "") const { return (root_ / relative).string(); }

 private:
  std::filesystem::path root_;
};

}  // namespace inferd::topology::testing
