#include "repository/internal/phase.h"

#include <string>

namespace inferd::repository::internal {
namespace {

template <typename P, typename E>
Status Illegal(P phase, E event, std::string_view (*phase_name)(P),
               std::string_view (*event_name)(E)) {
  return FailedPrecondition("illegal lifecycle transition: " + std::string(event_name(event)) +
                            " in " + std::string(phase_name(phase)));
}

}  // namespace

StatusOr<Phase> Next(Phase phase, Event event) {
  using P = Phase;
  using E = Event;
  if (event == E::kCancelled && phase != P::kIdle) return P::kIdle;
  switch (phase) {
    case P::kIdle:
      if (event == E::kLoadAsked) return P::kLoading;
      if (event == E::kUnloadAsked) return P::kUnloading;
      break;
    case P::kLoading:
    case P::kLoadingThenUnload: {
      const bool then_unload = phase == P::kLoadingThenUnload;
      if (event == E::kLoadAsked) return P::kLoading;
      if (event == E::kUnloadAsked) return P::kLoadingThenUnload;
      if (event == E::kNoRoom) return then_unload ? P::kParkedThenUnload : P::kParked;
      if (event == E::kLoadEnded) return then_unload ? P::kUnloading : P::kIdle;
      break;
    }
    case P::kParked:
    case P::kParkedThenUnload: {
      const bool then_unload = phase == P::kParkedThenUnload;
      if (event == E::kLoadAsked) return P::kParked;
      if (event == E::kUnloadAsked) return P::kParkedThenUnload;
      if (event == E::kRoom) return then_unload ? P::kLoadingThenUnload : P::kLoading;
      if (event == E::kAbandoned) return then_unload ? P::kUnloading : P::kIdle;
      break;
    }
    case P::kUnloading:
    case P::kUnloadingThenLoad: {
      const bool then_load = phase == P::kUnloadingThenLoad;
      if (event == E::kLoadAsked) return P::kUnloadingThenLoad;
      if (event == E::kUnloadAsked) return P::kUnloading;
      if (event == E::kUnloadEnded) return then_load ? P::kLoading : P::kIdle;
      break;
    }
  }
  return Illegal(phase, event, &PhaseName, &EventName);
}

StatusOr<VersionPhase> Next(VersionPhase phase, VersionEvent event) {
  using P = VersionPhase;
  using E = VersionEvent;
  switch (phase) {
    case P::kUnloaded:
      if (event == E::kLoadStarted) return P::kLoading;
      // Not loaded, quarantined at start by the crash journal.
      if (event == E::kQuarantined) return P::kQuarantined;
      break;
    case P::kQuarantined:
      if (event == E::kLoadStarted) return P::kLoading;
      break;
    case P::kLoading:
      if (event == E::kLoaded) return P::kReady;
      if (event == E::kLoadFailed) return P::kUnloaded;
      break;
    case P::kReady:
      if (event == E::kLoadStarted) return P::kReloading;
      if (event == E::kRetired) return P::kUnloaded;
      if (event == E::kQuarantined) return P::kQuarantined;
      break;
    case P::kReloading:
      if (event == E::kLoaded || event == E::kLoadFailed) return P::kReady;
      if (event == E::kQuarantined) return P::kLoading;
      break;
  }
  return Illegal(phase, event, &VersionPhaseName, &VersionEventName);
}

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kIdle:
      return "idle";
    case Phase::kLoading:
      return "loading";
    case Phase::kLoadingThenUnload:
      return "loading, then unloading";
    case Phase::kParked:
      return "load waiting for room";
    case Phase::kParkedThenUnload:
      return "load waiting for room, then unloading";
    case Phase::kUnloading:
      return "unloading";
    case Phase::kUnloadingThenLoad:
      return "unloading, then loading";
  }
  return "unknown";
}

std::string_view VersionPhaseName(VersionPhase phase) {
  switch (phase) {
    case VersionPhase::kUnloaded:
      return "unloaded";
    case VersionPhase::kLoading:
      return "loading";
    case VersionPhase::kReady:
      return "ready";
    case VersionPhase::kReloading:
      return "ready, reloading";
    case VersionPhase::kQuarantined:
      return "quarantined";
  }
  return "unknown";
}

std::string_view EventName(Event event) {
  switch (event) {
    case Event::kLoadAsked:
      return "load asked";
    case Event::kUnloadAsked:
      return "unload asked";
    case Event::kNoRoom:
      return "no room";
    case Event::kRoom:
      return "room";
    case Event::kAbandoned:
      return "abandoned";
    case Event::kLoadEnded:
      return "load ended";
    case Event::kUnloadEnded:
      return "unload ended";
    case Event::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string_view VersionEventName(VersionEvent event) {
  switch (event) {
    case VersionEvent::kLoadStarted:
      return "load started";
    case VersionEvent::kLoaded:
      return "loaded";
    case VersionEvent::kLoadFailed:
      return "load failed";
    case VersionEvent::kRetired:
      return "retired";
    case VersionEvent::kQuarantined:
      return "quarantined";
  }
  return "unknown";
}

}  // namespace inferd::repository::internal
