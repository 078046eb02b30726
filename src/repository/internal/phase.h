// The lifecycle's two state machines, as pure functions (no locks, no I/O):
// the Lifecycle (lifecycle.h) keeps one Phase per model and one VersionPhase
// per version, and changes them only through Next, so that what may follow
// what is written down once, here, and tested alone. Modelled on TF Serving's
// LoaderHarness (core/loader_harness.h): named states, named transitions, and
// an error for a transition that is not allowed.
//
// A model's Phase: the job it runs (at most one at a time) and the ask that
// waits for that job to end.
//
//   from                 event         to
//   kIdle                kLoadAsked    kLoading
//   kIdle                kUnloadAsked  kUnloading
//   kLoading             kLoadAsked    kLoading             (joins the load)
//   kLoading             kUnloadAsked  kLoadingThenUnload
//   kLoading             kNoRoom       kParked
//   kLoading             kLoadEnded    kIdle
//   kLoadingThenUnload   kLoadAsked    kLoading             (the latest ask wins)
//   kLoadingThenUnload   kUnloadAsked  kLoadingThenUnload
//   kLoadingThenUnload   kNoRoom       kParkedThenUnload
//   kLoadingThenUnload   kLoadEnded    kUnloading
//   kParked              kLoadAsked    kParked
//   kParked              kUnloadAsked  kParkedThenUnload
//   kParked              kRoom         kLoading
//   kParked              kAbandoned    kIdle
//   kParkedThenUnload    kLoadAsked    kParked
//   kParkedThenUnload    kUnloadAsked  kParkedThenUnload
//   kParkedThenUnload    kRoom         kLoadingThenUnload
//   kParkedThenUnload    kAbandoned    kUnloading
//   kUnloading           kLoadAsked    kUnloadingThenLoad
//   kUnloading           kUnloadAsked  kUnloading           (joins the unload)
//   kUnloading           kUnloadEnded  kIdle
//   kUnloadingThenLoad   kLoadAsked    kUnloadingThenLoad
//   kUnloadingThenLoad   kUnloadAsked  kUnloading           (the latest ask wins)
//   kUnloadingThenLoad   kUnloadEnded  kLoading
//   any but kIdle        kCancelled    kIdle                (shutdown: the job will not run)
//
// A version's VersionPhase: whether it serves.
//
//   from          event           to
//   kUnloaded     kLoadStarted    kLoading
//   kUnloaded     kQuarantined    kQuarantined   (the crash journal quarantines at start)
//   kQuarantined  kLoadStarted    kLoading       (only a load through the management API)
//   kReady        kLoadStarted    kReloading     (the old instance serves meanwhile)
//   kLoading      kLoaded         kReady
//   kLoading      kLoadFailed     kUnloaded
//   kReloading    kLoaded         kReady         (the new instance replaces the old)
//   kReloading    kLoadFailed     kReady         (the old instance goes on serving)
//   kReady        kRetired        kUnloaded      (unloaded, evicted, shut down)
//   kReady        kQuarantined    kQuarantined
//   kReloading    kQuarantined    kLoading       (the reload under way replaces it)
//
// Every other pair is illegal: Next answers kFailedPrecondition naming both.
#pragma once

#include <string_view>

#include "common/status.h"

namespace inferd::repository::internal {

enum class Phase {
  kIdle,               // no job: its versions serve, or not
  kLoading,            // a load job is queued or running
  kLoadingThenUnload,  // ... and an unload was asked meanwhile: it runs next
  kParked,             // the load waits for room (models in use hold the budget)
  kParkedThenUnload,   // ... and an unload was asked meanwhile
  kUnloading,          // an unload job is queued or running
  kUnloadingThenLoad,  // ... and a load was asked meanwhile: it runs next
};

enum class Event {
  kLoadAsked,    // through the management API, at start-up, or by a request (on demand)
  kUnloadAsked,  // through the management API
  kNoRoom,       // the load found no room while models in use hold the budget
  kRoom,         // a parked load is posted again (something was freed or went idle)
  kAbandoned,    // nobody waits for a parked load any more
  kLoadEnded,    // the load job ended: loaded, failed, or no room at all
  kUnloadEnded,  // the unload job ended
  kCancelled,    // the server shuts down: the job will not run (again)
};

enum class VersionPhase {
  kUnloaded,     // not in memory: never loaded, failed, unloaded or evicted
  kLoading,      // its first instance is being loaded
  kReady,        // serving
  kReloading,    // serving, while a new instance of it loads
  kQuarantined,  // taken out of service (a forward was given up); loads only by hand
};

enum class VersionEvent { kLoadStarted, kLoaded, kLoadFailed, kRetired, kQuarantined };

StatusOr<Phase> Next(Phase phase, Event event);
StatusOr<VersionPhase> Next(VersionPhase phase, VersionEvent event);

// A load job is queued, running or parked (Entry's old `job == kLoad`).
inline bool Loading(Phase p) {
  return p == Phase::kLoading || p == Phase::kLoadingThenUnload || p == Phase::kParked ||
         p == Phase::kParkedThenUnload;
}
inline bool Parked(Phase p) { return p == Phase::kParked || p == Phase::kParkedThenUnload; }
// An unload job is queued or running.
inline bool Unloading(Phase p) { return p == Phase::kUnloading || p == Phase::kUnloadingThenLoad; }
// An instance of the version is in memory and serves.
inline bool Serving(VersionPhase p) {
  return p == VersionPhase::kReady || p == VersionPhase::kReloading;
}

std::string_view PhaseName(Phase phase);
std::string_view VersionPhaseName(VersionPhase phase);
std::string_view EventName(Event event);
std::string_view VersionEventName(VersionEvent event);

}  // namespace inferd::repository::internal
