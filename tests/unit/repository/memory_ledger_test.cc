// The memory ledger alone: reserve, commit, retire, evict, release, the
// memory outside the footprints and when the backend's caches are due.
#include "repository/internal/memory_ledger.h"

#include <gtest/gtest.h>

#include "unit/support/test_units.h"

namespace inferd::repository::internal {
namespace {

using test_support::At;

TEST(MemoryLedger, ReservationsCountAsCommittedUntilUnreserved) {
  MemoryLedger ledger(1000);
  ledger.Reserve(300);
  EXPECT_EQ(ledger.reserved(), 300);
  EXPECT_EQ(ledger.committed(), 300);
  EXPECT_EQ(ledger.resident(), 0);
  ledger.Unreserve(300);
  EXPECT_EQ(ledger.committed(), 0);
}

TEST(MemoryLedger, ACommittedInstanceIsResidentUntilReleased) {
  MemoryLedger ledger(1000);
  const uint64_t a = ledger.NewSerial(), b = ledger.NewSerial();
  EXPECT_NE(a, b);
  ledger.Commit(a, "m", 100);
  ledger.Commit(b, "n", 50);
  EXPECT_EQ(ledger.resident(), 150);
  EXPECT_EQ(ledger.ResidentOf("m"), 100);
  EXPECT_EQ(ledger.ResidentOf("n"), 50);
  EXPECT_EQ(ledger.serving(), 2);
  EXPECT_TRUE(ledger.Holds("m"));

  EXPECT_EQ(ledger.Release(a), std::optional<std::string>("m"));
  EXPECT_EQ(ledger.resident(), 50);
  EXPECT_EQ(ledger.ResidentOf("m"), 0);
  EXPECT_FALSE(ledger.Holds("m"));
  EXPECT_EQ(ledger.Release(a), std::nullopt) << "a second release is nothing";
  EXPECT_EQ(ledger.Release(99), std::nullopt) << "nor one that was never committed";
  EXPECT_EQ(ledger.resident(), 50);
}

TEST(MemoryLedger, ARetiredInstanceStaysResidentAndCountsAsRetiring) {
  MemoryLedger ledger(1000);
  const uint64_t old_one = ledger.NewSerial(), new_one = ledger.NewSerial();
  ledger.Commit(old_one, "m", 100);
  ledger.Retire(old_one);
  ledger.Retire(old_one);  // once only
  ledger.Commit(new_one, "m", 120);
  EXPECT_EQ(ledger.RetiringOf("m"), 1);
  EXPECT_EQ(ledger.ResidentOf("m"), 220) << "both until the old one is released";
  EXPECT_EQ(ledger.committed(), 220);
  EXPECT_EQ(ledger.serving(), 1);
  ledger.Release(old_one);
  EXPECT_EQ(ledger.RetiringOf("m"), 0);
  EXPECT_EQ(ledger.ResidentOf("m"), 120);
  EXPECT_TRUE(ledger.Holds("m"));
}

TEST(MemoryLedger, AVictimIsNoLongerCommittedButStillResident) {
  MemoryLedger ledger(1000);
  const uint64_t s = ledger.NewSerial();
  ledger.Commit(s, "m", 400);
  ledger.MarkEvicting(s);
  ledger.MarkEvicting(s);  // counted once
  EXPECT_EQ(ledger.resident(), 400);
  EXPECT_EQ(ledger.committed(), 0);
  EXPECT_EQ(ledger.serving(), 0);
  ledger.Release(s);
  EXPECT_EQ(ledger.resident(), 0);
  EXPECT_EQ(ledger.committed(), 0) << "the victim's bytes leave `evicting` with it";
}

TEST(MemoryLedger, OutsideIsWhatNoChargeAccountsFor) {
  MemoryLedger ledger(1000);
  ledger.set_base(5000);
  ledger.Commit(ledger.NewSerial(), "m", 100);
  EXPECT_TRUE(ledger.ReadOutside(5300));
  EXPECT_EQ(ledger.outside(), 200);
  EXPECT_TRUE(ledger.ReadOutside(4000));
  EXPECT_EQ(ledger.outside(), 0) << "never negative";
  ledger.Reserve(10);
  EXPECT_FALSE(ledger.ReadOutside(9000)) << "not read while a load runs";
  EXPECT_EQ(ledger.outside(), 0);
}

TEST(MemoryLedger, OverBudgetCountsOutside) {
  MemoryLedger ledger(1000);
  ledger.Commit(ledger.NewSerial(), "m", 900);
  EXPECT_FALSE(ledger.OverBudget());
  ledger.ReadOutside(900 + 200);
  EXPECT_TRUE(ledger.OverBudget());
  MemoryLedger unlimited(0);
  unlimited.Commit(unlimited.NewSerial(), "m", 1 << 30);
  EXPECT_FALSE(unlimited.OverBudget()) << "no budget";
}

TEST(MemoryLedger, PlanRoomMakesRoomForThePeakWhereItCan) {
  MemoryLedger ledger(1000);
  ledger.Commit(ledger.NewSerial(), "old", 300);
  ledger.Commit(ledger.NewSerial(), "new", 300);
  const std::vector<CacheEntry> idle = {{"old", 300, At(1)}, {"new", 300, At(2)}};
  bool peak_left_out = true;
  // 600 + need 300 + peak 200 over 1000: the oldest goes.
  EvictionPlan plan = ledger.PlanRoom(idle, 300, 200, &peak_left_out);
  EXPECT_TRUE(plan.fits);
  EXPECT_FALSE(peak_left_out);
  EXPECT_EQ(plan.victims, std::vector<std::string>({"old"}));

  // A peak no eviction can make room for is left out; the load still fits.
  plan = ledger.PlanRoom(idle, 300, 5000, &peak_left_out);
  EXPECT_TRUE(peak_left_out);
  EXPECT_TRUE(plan.fits);
  EXPECT_FALSE(plan.outside_left_out);
}

TEST(MemoryLedger, OutsideLeftOutIsNotedOnceUntilItFitsAgain) {
  MemoryLedger ledger(1000);
  EXPECT_TRUE(ledger.NoteOutsideLeftOut(true));
  EXPECT_FALSE(ledger.NoteOutsideLeftOut(true));
  EXPECT_FALSE(ledger.NoteOutsideLeftOut(false));
  EXPECT_TRUE(ledger.NoteOutsideLeftOut(true));
}

TEST(MemoryLedger, CachesAreDueWhenOutsideGrewByATenthOfTheBudget) {
  using Due = MemoryLedger::CacheRelease;
  MemoryLedger ledger(1000);
  ledger.Commit(ledger.NewSerial(), "m", 100);
  ledger.ReadOutside(100 + 100);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kNotDue) << "100 is not more than a tenth";
  ledger.ReadOutside(100 + 101);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kGrew);
  ledger.CachesReleased();
  EXPECT_EQ(ledger.outside_after_release(), 101);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kNotDue) << "measured from the last release";
  ledger.ReadOutside(100 + 202);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kGrew);
}

TEST(MemoryLedger, CachesAreDueWhenNothingIsResident) {
  using Due = MemoryLedger::CacheRelease;
  MemoryLedger ledger(0);  // no budget: only the empty rule applies
  const uint64_t s = ledger.NewSerial();
  ledger.Commit(s, "m", 100);
  ledger.ReadOutside(100 + 5000);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kNotDue) << "no budget, a model resident";
  ledger.Release(s);
  ledger.ReadOutside(0);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kEmpty)
      << "a model was resident since the threads were recycled";
  ledger.ThreadsRecycled();
  ledger.CachesReleased();
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kNotDue);
  ledger.ReadOutside(10);
  EXPECT_EQ(ledger.CacheReleaseDue(), Due::kEmpty) << "outside grew since the release";
}

}  // namespace
}  // namespace inferd::repository::internal
