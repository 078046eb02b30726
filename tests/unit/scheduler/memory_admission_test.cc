#include "scheduler/memory_admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "unit/support/test_units.h"

namespace inferd::scheduler {
namespace {

using test_support::kMiB;

AdmissionFigures Figures(int64_t limit, int64_t resident, int64_t reserved = 0) {
  return {limit * kMiB, resident * kMiB, reserved * kMiB};
}

std::vector<int64_t> Needs(std::initializer_list<int64_t> mib) {
  std::vector<int64_t> v;
  for (int64_t m : mib) v.push_back(m * kMiB);
  return v;
}

TEST(AdmitTest, ABatchThatFitsRunsWhole) {
  AdmissionDecision d = Admit(Needs({100, 200, 300}), Figures(1000, 500));
  EXPECT_FALSE(d.refuse);
  EXPECT_FALSE(d.wait);
  EXPECT_EQ(d.run, 3u);
  EXPECT_EQ(d.needed, 300 * kMiB);
}

TEST(AdmitTest, ABatchThatDoesNotFitIsCutToTheLongestPrefixThatDoes) {
  AdmissionDecision d = Admit(Needs({100, 200, 300, 400}), Figures(1000, 750));
  EXPECT_EQ(d.run, 2u);  // 750 + 200 <= 1000 < 750 + 300
  EXPECT_EQ(d.needed, 200 * kMiB);
  EXPECT_FALSE(d.refuse);
}

TEST(AdmitTest, TheRunningBatchesReservationsCountAgainstTheRoom) {
  AdmissionDecision d = Admit(Needs({100, 200, 300}), Figures(1000, 600, 200));
  EXPECT_EQ(d.run, 2u);  // 600 + 200 + 200 <= 1000
}

TEST(AdmitTest, ARequestThatFitsOnlyOnAnIdleProcessWaits) {
  // 900 resident of which 300 are the running batches': 600 + 350 fits.
  AdmissionDecision d = Admit(Needs({350, 700}), Figures(1000, 900, 300));
  EXPECT_TRUE(d.wait);
  EXPECT_FALSE(d.refuse);
  EXPECT_EQ(d.run, 0u);
}

TEST(AdmitTest, ARequestThatCannotFitEvenOnAnIdleProcessIsRefused) {
  AdmissionDecision d = Admit(Needs({500, 600}), Figures(1000, 900, 300));
  EXPECT_TRUE(d.refuse);  // 600 + 500 > 1000
  EXPECT_EQ(d.needed, 500 * kMiB);
  EXPECT_EQ(d.figures.resident, 900 * kMiB);
  d = Admit(Needs({1001}), Figures(1000, 0));
  EXPECT_TRUE(d.refuse) << "larger than the limit itself";
}

TEST(AdmitTest, TheOnlyRequestOfAnIdleProcessRunsWhenItFitsExactly) {
  AdmissionDecision d = Admit(Needs({500}), Figures(1000, 500));
  EXPECT_EQ(d.run, 1u);
  EXPECT_FALSE(d.wait);
}

TEST(AdmitTest, TheMarginIsFivePercentAtLeast64MiB) {
  EXPECT_EQ(AdmissionMargin(int64_t{10} << 30), (int64_t{10} << 30) / 20);
  EXPECT_EQ(AdmissionMargin(1024 * kMiB), 64 * kMiB);
  EXPECT_EQ(AdmissionMargin(100 * kMiB), 50 * kMiB) << "at most half of a tiny limit";
}

// The process as a test sets it: resident bytes, and what giving the
// allocator's free pages back would free.
struct FakeProcess {
  std::atomic<int64_t> resident{0};
  std::atomic<int64_t> freeable{0};
  std::atomic<int> releases{0};
  MemoryProbe Probe() {
    MemoryProbe p;
    p.resident = [this] { return resident.load(); };
    p.take_peak = [this] { return resident.load(); };
    p.release_free = [this] {
      ++releases;
      resident -= freeable.exchange(0);
    };
    return p;
  }
};

TEST(MemoryAdmissionTest, FreePagesGoBackBeforeABatchIsCut) {
  FakeProcess process;
  process.resident = 900 * kMiB;
  process.freeable = 400 * kMiB;  // pages a freed forward left in the allocator
  MemoryAdmission admission({1064 * kMiB, "--memory-budget 1.0 GiB", process.Probe()});
  EXPECT_EQ(admission.limit(), 1000 * kMiB);  // less the 64 MiB margin
  AdmissionDecision d = admission.Decide(Needs({100, 200, 300}));
  EXPECT_EQ(process.releases.load(), 1);
  EXPECT_EQ(d.run, 3u) << "500 resident once the free pages went back";
  // Reserved until released: the next batch sees the 300 MiB.
  d = admission.Decide(Needs({150, 250}));
  EXPECT_EQ(d.run, 1u);  // 500 + 300 + 150 <= 1000 < 500 + 300 + 250
  admission.Release(300 * kMiB);
  admission.Release(150 * kMiB);
  d = admission.Decide(Needs({150, 250}));
  EXPECT_EQ(d.run, 2u);
  admission.Release(d.needed);
}

TEST(MemoryAdmissionTest, ARefusalNamesTheFigures) {
  FakeProcess process;
  process.resident = 600 * kMiB;
  MemoryAdmission admission({1064 * kMiB, "--memory-budget 1.0 GiB", process.Probe()});
  AdmissionDecision d = admission.Decide(Needs({500}));
  ASSERT_TRUE(d.refuse);
  Status st = admission.Refusal("model 'bert:1'", d, 8, 8 * 512);
  EXPECT_EQ(st.code(), StatusCode::kPayloadTooLarge);
  EXPECT_EQ(st.message(),
            "model 'bert:1': the request (8 items of 4096 padded tokens) needs 500.0 MiB of "
            "activation memory and cannot fit even alone: resident 600.0 MiB, plus 500.0 MiB, "
            "is over the memory limit of 1000.0 MiB (--memory-budget 1.0 GiB, less a margin of "
            "64.0 MiB); send fewer items or shorter inputs");
}

TEST(MemoryAdmissionTest, AWaitingBatchRunsWhenARunningOneReleases) {
  FakeProcess process;
  process.resident = 500 * kMiB;
  MemoryAdmission admission({1064 * kMiB, "test", process.Probe()});
  AdmissionDecision first = admission.Decide(Needs({400}));
  ASSERT_EQ(first.run, 1u);
  process.resident = 800 * kMiB;  // the first batch's forward allocates
  std::atomic<bool> decided{false};
  AdmissionDecision second;
  std::thread waiter([&] {
    second = admission.Decide(Needs({300}));  // 400 idle + 300 fits, not beside the first
    decided = true;
  });
  process.resident = 500 * kMiB;  // the first batch's forward ends
  admission.Release(first.needed);
  waiter.join();
  EXPECT_TRUE(decided);
  EXPECT_EQ(second.run, 1u);
  EXPECT_FALSE(second.refuse);
}

}  // namespace
}  // namespace inferd::scheduler
