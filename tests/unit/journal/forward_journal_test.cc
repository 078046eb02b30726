#include "journal/forward_journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace inferd::journal {
namespace {

std::string TempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("journal_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(ForwardJournalTest, NoFileIsNotFound) {
  auto snap = ReadJournal(TempPath("absent"));
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kNotFound);
}

TEST(ForwardJournalTest, WhatRunsIsOnDiskWhileItRuns) {
  const std::string path = TempPath("running");
  auto journal = ForwardJournal::Create(path);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  const uint32_t a = (*journal)->Register("resnet", 1);
  const uint32_t b = (*journal)->Register("bert", 3);
  EXPECT_EQ((*journal)->Register("resnet", 1), a);  // once per version
  EXPECT_NE(a, b);
  (*journal)->Begin(a);
  std::thread other([&] { (*journal)->Begin(b); });  // another thread, its own slot
  other.join();
  auto snap = ReadJournal(path);  // read as the next process would
  ASSERT_TRUE(snap.ok()) << snap.status().message();
  EXPECT_EQ(snap->pid, ::getpid());
  EXPECT_FALSE(snap->clean);
  EXPECT_EQ(snap->running, (std::vector<std::string>{"resnet:1", "bert:3"}));
  // The other thread ended: its slot is free for the next thread, which
  // marks over it.
  std::thread next([&] {
    (*journal)->Begin(a);
    (*journal)->End();
  });
  next.join();
  (*journal)->End();
  snap = ReadJournal(path);
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(snap->running.empty());
}

TEST(ForwardJournalTest, CleanMeansNothingRan) {
  const std::string path = TempPath("clean");
  auto journal = ForwardJournal::Create(path);
  ASSERT_TRUE(journal.ok());
  (*journal)->Begin((*journal)->Register("m", 1));
  (*journal)->MarkClean();
  auto snap = ReadJournal(path);
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(snap->clean);
  EXPECT_TRUE(snap->running.empty());
  // A new journal at the same path starts idle.
  journal = ForwardJournal::Create(path);
  ASSERT_TRUE(journal.ok());
  snap = ReadJournal(path);
  ASSERT_TRUE(snap.ok());
  EXPECT_FALSE(snap->clean);
  EXPECT_TRUE(snap->running.empty());
}

TEST(ForwardJournalTest, ANameTooLongIsCutAndAFullTableMarksUnnamed) {
  const std::string path = TempPath("full");
  auto journal = ForwardJournal::Create(path);
  ASSERT_TRUE(journal.ok());
  for (int i = 0; i < kJournalModels; ++i) ASSERT_NE((*journal)->Register("m", i), 0u);
  EXPECT_EQ((*journal)->Register("one-too-many", 1), kJournalUnnamed);
  (*journal)->Begin(kJournalUnnamed);
  auto snap = ReadJournal(path);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->running, std::vector<std::string>{"?"});
  (*journal)->End();
}

TEST(ForwardJournalTest, AnotherFileIsRefused) {
  const std::string path = TempPath("other");
  { std::ofstream(path) << "not a journal"; }
  auto snap = ReadJournal(path);
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ForwardMarkTest, AnEmptyMarkMarksNothingAndAScopeEndsTheForward) {
  ForwardMark none;
  none.Begin();
  none.End();
  const std::string path = TempPath("scope");
  auto journal = ForwardJournal::Create(path);
  ASSERT_TRUE(journal.ok());
  ForwardMark mark{journal->get(), (*journal)->Register("m", 2)};
  try {
    ForwardScope running(mark);
    EXPECT_EQ(ReadJournal(path)->running, std::vector<std::string>{"m:2"});
    throw std::runtime_error("a forward that throws");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(ReadJournal(path)->running.empty());
}

}  // namespace
}  // namespace inferd::journal
