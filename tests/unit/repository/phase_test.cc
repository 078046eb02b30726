// The lifecycle's state machines alone (internal/phase.h): every legal
// transition lands where the table says, every other pair is refused.
#include "repository/internal/phase.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace inferd::repository::internal {
namespace {

using P = Phase;
using E = Event;
using VP = VersionPhase;
using VE = VersionEvent;

constexpr P kPhases[] = {
    P::kIdle,      P::kLoading,          P::kLoadingThenUnload, P::kParked, P::kParkedThenUnload,
    P::kUnloading, P::kUnloadingThenLoad};
constexpr E kEvents[] = {E::kLoadAsked, E::kUnloadAsked, E::kNoRoom,      E::kRoom,
                         E::kAbandoned, E::kLoadEnded,   E::kUnloadEnded, E::kCancelled};
constexpr VP kVersionPhases[] = {VP::kUnloaded, VP::kLoading, VP::kReady, VP::kReloading,
                                 VP::kQuarantined};
constexpr VE kVersionEvents[] = {VE::kLoadStarted, VE::kLoaded, VE::kLoadFailed, VE::kRetired,
                                 VE::kQuarantined};

// The table of phase.h, written out again.
const std::map<std::pair<P, E>, P>& Legal() {
  static const std::map<std::pair<P, E>, P> legal = {
      {{P::kIdle, E::kLoadAsked}, P::kLoading},
      {{P::kIdle, E::kUnloadAsked}, P::kUnloading},
      {{P::kLoading, E::kLoadAsked}, P::kLoading},
      {{P::kLoading, E::kUnloadAsked}, P::kLoadingThenUnload},
      {{P::kLoading, E::kNoRoom}, P::kParked},
      {{P::kLoading, E::kLoadEnded}, P::kIdle},
      {{P::kLoadingThenUnload, E::kLoadAsked}, P::kLoading},
      {{P::kLoadingThenUnload, E::kUnloadAsked}, P::kLoadingThenUnload},
      {{P::kLoadingThenUnload, E::kNoRoom}, P::kParkedThenUnload},
      {{P::kLoadingThenUnload, E::kLoadEnded}, P::kUnloading},
      {{P::kParked, E::kLoadAsked}, P::kParked},
      {{P::kParked, E::kUnloadAsked}, P::kParkedThenUnload},
      {{P::kParked, E::kRoom}, P::kLoading},
      {{P::kParked, E::kAbandoned}, P::kIdle},
      {{P::kParkedThenUnload, E::kLoadAsked}, P::kParked},
      {{P::kParkedThenUnload, E::kUnloadAsked}, P::kParkedThenUnload},
      {{P::kParkedThenUnload, E::kRoom}, P::kLoadingThenUnload},
      {{P::kParkedThenUnload, E::kAbandoned}, P::kUnloading},
      {{P::kUnloading, E::kLoadAsked}, P::kUnloadingThenLoad},
      {{P::kUnloading, E::kUnloadAsked}, P::kUnloading},
      {{P::kUnloading, E::kUnloadEnded}, P::kIdle},
      {{P::kUnloadingThenLoad, E::kLoadAsked}, P::kUnloadingThenLoad},
      {{P::kUnloadingThenLoad, E::kUnloadAsked}, P::kUnloading},
      {{P::kUnloadingThenLoad, E::kUnloadEnded}, P::kLoading},
      {{P::kLoading, E::kCancelled}, P::kIdle},
      {{P::kLoadingThenUnload, E::kCancelled}, P::kIdle},
      {{P::kParked, E::kCancelled}, P::kIdle},
      {{P::kParkedThenUnload, E::kCancelled}, P::kIdle},
      {{P::kUnloading, E::kCancelled}, P::kIdle},
      {{P::kUnloadingThenLoad, E::kCancelled}, P::kIdle},
  };
  return legal;
}

const std::map<std::pair<VP, VE>, VP>& LegalVersion() {
  static const std::map<std::pair<VP, VE>, VP> legal = {
      {{VP::kUnloaded, VE::kLoadStarted}, VP::kLoading},
      {{VP::kUnloaded, VE::kQuarantined}, VP::kQuarantined},  // the crash journal, at start
      {{VP::kQuarantined, VE::kLoadStarted}, VP::kLoading},
      {{VP::kReady, VE::kLoadStarted}, VP::kReloading},
      {{VP::kLoading, VE::kLoaded}, VP::kReady},
      {{VP::kLoading, VE::kLoadFailed}, VP::kUnloaded},
      {{VP::kReloading, VE::kLoaded}, VP::kReady},
      {{VP::kReloading, VE::kLoadFailed}, VP::kReady},
      {{VP::kReady, VE::kRetired}, VP::kUnloaded},
      {{VP::kReady, VE::kQuarantined}, VP::kQuarantined},
      {{VP::kReloading, VE::kQuarantined}, VP::kLoading},
  };
  return legal;
}

TEST(PhaseTest, EveryPairIsLegalAsTheTableSaysOrRefused) {
  int legal = 0;
  for (P p : kPhases) {
    for (E e : kEvents) {
      SCOPED_TRACE(std::string(PhaseName(p)) + " + " + std::string(EventName(e)));
      StatusOr<P> next = Next(p, e);
      auto it = Legal().find({p, e});
      if (it == Legal().end()) {
        ASSERT_FALSE(next.ok());
        EXPECT_EQ(next.status().code(), StatusCode::kFailedPrecondition);
        EXPECT_EQ(next.status().message(),
                  "illegal lifecycle transition: " + std::string(EventName(e)) + " in " +
                      std::string(PhaseName(p)));
      } else {
        ASSERT_TRUE(next.ok()) << next.status().ToString();
        EXPECT_EQ(*next, it->second);
        ++legal;
      }
    }
  }
  EXPECT_EQ(legal, static_cast<int>(Legal().size()));
}

TEST(PhaseTest, EveryVersionPairIsLegalAsTheTableSaysOrRefused) {
  int legal = 0;
  for (VP p : kVersionPhases) {
    for (VE e : kVersionEvents) {
      SCOPED_TRACE(std::string(VersionPhaseName(p)) + " + " + std::string(VersionEventName(e)));
      StatusOr<VP> next = Next(p, e);
      auto it = LegalVersion().find({p, e});
      if (it == LegalVersion().end()) {
        ASSERT_FALSE(next.ok());
        EXPECT_EQ(next.status().code(), StatusCode::kFailedPrecondition);
      } else {
        ASSERT_TRUE(next.ok()) << next.status().ToString();
        EXPECT_EQ(*next, it->second);
        ++legal;
      }
    }
  }
  EXPECT_EQ(legal, static_cast<int>(LegalVersion().size()));
}

// The asks that arrive during a job: the latest wins, and the chained job
// runs when the first ends.
TEST(PhaseTest, AsksDuringAJobChainTheLatest) {
  P p = P::kIdle;
  for (E e : {E::kLoadAsked, E::kUnloadAsked, E::kLoadAsked, E::kUnloadAsked}) p = *Next(p, e);
  EXPECT_EQ(p, P::kLoadingThenUnload);
  p = *Next(p, E::kNoRoom);
  EXPECT_EQ(p, P::kParkedThenUnload);
  p = *Next(p, E::kRoom);
  p = *Next(p, E::kLoadEnded);
  EXPECT_EQ(p, P::kUnloading);
  p = *Next(p, E::kLoadAsked);
  EXPECT_EQ(p, P::kUnloadingThenLoad);
  EXPECT_EQ(*Next(p, E::kUnloadEnded), P::kLoading);
}

// A quarantined version leaves only through a load; a failed reload of it
// leaves it UNLOADED with its error, not quarantined.
TEST(PhaseTest, AQuarantinedVersionLeavesOnlyThroughALoad) {
  VP v = *Next(*Next(*Next(VP::kUnloaded, VE::kLoadStarted), VE::kLoaded), VE::kQuarantined);
  EXPECT_EQ(v, VP::kQuarantined);
  EXPECT_FALSE(Serving(v));
  for (VE e : {VE::kLoaded, VE::kLoadFailed, VE::kRetired, VE::kQuarantined}) {
    EXPECT_FALSE(Next(v, e).ok());
  }
  EXPECT_EQ(*Next(*Next(v, VE::kLoadStarted), VE::kLoadFailed), VP::kUnloaded);
}

TEST(PhaseTest, Predicates) {
  for (P p : kPhases) {
    EXPECT_EQ(Parked(p), p == P::kParked || p == P::kParkedThenUnload) << PhaseName(p);
    EXPECT_EQ(Loading(p), p == P::kLoading || p == P::kLoadingThenUnload || Parked(p))
        << PhaseName(p);
    EXPECT_EQ(Unloading(p), p == P::kUnloading || p == P::kUnloadingThenLoad) << PhaseName(p);
  }
  for (VP p : kVersionPhases) {
    EXPECT_EQ(Serving(p), p == VP::kReady || p == VP::kReloading) << VersionPhaseName(p);
  }
}

}  // namespace
}  // namespace inferd::repository::internal
