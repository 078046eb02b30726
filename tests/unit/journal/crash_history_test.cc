#include "journal/crash_history.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::journal {
namespace {

std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("crash_history_test_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(CrashHistoryTest, RecordsRoundTripAndBrokenLinesAreSkipped) {
  const std::string dir = FreshDir("roundtrip");
  ASSERT_TRUE(AppendCrash(dir, {100, "signal 11 (SIGSEGV)", {"bert:1", "resnet:2"}}).ok());
  { std::ofstream(dir + "/crashes.tsv", std::ios::app) << "garbage\n17"; }  // cut by a crash
  ASSERT_TRUE(AppendCrash(dir, {200, "exit\tcode 3", {}}).ok());
  auto crashes = ReadCrashes(dir);
  ASSERT_EQ(crashes.size(), 2u);
  EXPECT_EQ(crashes[0].cause, "signal 11 (SIGSEGV)");
  EXPECT_EQ(crashes[0].models, (std::vector<std::string>{"bert:1", "resnet:2"}));
  EXPECT_EQ(crashes[1].unix_seconds, 200);
  EXPECT_EQ(crashes[1].cause, "exit code 3");  // a tab would have cut the record
  EXPECT_TRUE(crashes[1].models.empty());
  ASSERT_TRUE(AppendCleared(dir, "bert", 150).ok());
  ASSERT_TRUE(AppendCleared(dir, "bert", 120).ok());
  EXPECT_EQ(ReadCleared(dir).at("bert"), 150);
  EXPECT_TRUE(ReadCrashes(FreshDir("empty")).empty());
}

TEST(CrashHistoryTest, TwoCrashesWithinTenMinutesQuarantine) {
  const std::vector<CrashRecord> crashes = {
      {1000, "signal 11 (SIGSEGV)", {"bert:1", "resnet:1"}},
      {1500, "signal 9 (SIGKILL)", {"bert:1"}},
      {5000, "signal 6 (SIGABRT)", {"resnet:1"}},  // resnet: 4000 s apart
  };
  auto q = DecideQuarantines(crashes, {});
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].model, "bert");
  EXPECT_EQ(q[0].version, 1);
  EXPECT_NE(q[0].reason.find("2 crashes"), std::string::npos) << q[0].reason;
  EXPECT_NE(q[0].reason.find("SIGSEGV"), std::string::npos) << q[0].reason;
  EXPECT_NE(q[0].reason.find("SIGKILL"), std::string::npos) << q[0].reason;
  EXPECT_NE(q[0].reason.find("1970-01-01 00:16:40 UTC"), std::string::npos) << q[0].reason;
}

TEST(CrashHistoryTest, OneCrashOrCrashesFarApartDoNot) {
  EXPECT_TRUE(DecideQuarantines({{1000, "signal 11 (SIGSEGV)", {"m:1"}}}, {}).empty());
  EXPECT_TRUE(DecideQuarantines({{1000, "a", {"m:1"}}, {1000 + kCrashWindowSeconds + 1, "b", {"m:1"}}},
                                {})
                  .empty());
  EXPECT_EQ(DecideQuarantines({{1000, "a", {"m:1"}}, {1000 + kCrashWindowSeconds, "b", {"m:1"}}}, {})
                .size(),
            1u);
  // Two versions are two models here.
  EXPECT_TRUE(DecideQuarantines({{1000, "a", {"m:1"}}, {1001, "b", {"m:2"}}}, {}).empty());
  // Unnamed ("?") and crashes with no model quarantine nothing.
  EXPECT_TRUE(DecideQuarantines({{1000, "a", {"?"}}, {1001, "b", {"?"}}, {1002, "c", {}}}, {})
                  .empty());
}

TEST(CrashHistoryTest, AManagementLoadForgetsTheCrashesBeforeIt) {
  const std::vector<CrashRecord> two = {{1000, "a", {"m:1"}}, {1100, "b", {"m:1"}}};
  EXPECT_TRUE(DecideQuarantines(two, {{"m", 1100}}).empty());  // cleared in the same second
  EXPECT_EQ(DecideQuarantines(two, {{"m", 1050}}).size(), 0u);
  EXPECT_EQ(DecideQuarantines(two, {{"other", 1200}}).size(), 1u);
  // Two more after the clearing quarantine it again.
  auto more = two;
  more.push_back({1300, "c", {"m:1"}});
  more.push_back({1400, "d", {"m:1"}});
  auto q = DecideQuarantines(more, {{"m", 1200}});
  ASSERT_EQ(q.size(), 1u);
  EXPECT_NE(q[0].reason.find("running in 2 crashes"), std::string::npos) << q[0].reason;
}

}  // namespace
}  // namespace inferd::journal
