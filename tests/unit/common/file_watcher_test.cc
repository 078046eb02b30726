#include "common/file_watcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace inferd {
namespace {

namespace fs = std::filesystem;

TEST(FileWatcherTest, StampsChangeWithTheFile) {
  const fs::path path = fs::temp_directory_path() / ("inferd-stamp-" + std::to_string(::getpid()));
  fs::remove(path);
  EXPECT_FALSE(StampFile(path).exists);
  std::ofstream(path) << "a";
  const FileStamp first = StampFile(path);
  EXPECT_TRUE(first.exists);
  EXPECT_EQ(first, StampFile(path));
  std::ofstream(path.string() + ".new") << "ab";
  fs::rename(path.string() + ".new", path);  // a new inode and size
  EXPECT_NE(first, StampFile(path));
  fs::remove(path);
}

TEST(FileWatcherTest, CallsBackOnAChange) {
  const fs::path path = fs::temp_directory_path() / ("inferd-watch-" + std::to_string(::getpid()));
  std::ofstream(path) << "a";
  std::atomic<int> calls{0};
  auto watcher = FileWatcher::Create({{path.string()}, std::chrono::milliseconds(5), [&] { ++calls; }});
  std::ofstream(path.string() + ".new") << "bcd";
  fs::rename(path.string() + ".new", path);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (calls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_GE(calls.load(), 1);
  watcher.reset();  // stops and joins
  fs::remove(path);
}

}  // namespace
}  // namespace inferd
