#include "repository/model_status.h"

namespace inferd::repository {

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnloading:
      return "UNLOADING";
    case ModelState::kQuarantined:
      return "QUARANTINED";
  }
  return "UNKNOWN";
}

std::string_view LoadPolicyName(LoadPolicy policy) {
  switch (policy) {
    case LoadPolicy::kEager:
      return "eager";
    case LoadPolicy::kLazy:
      return "lazy";
    case LoadPolicy::kManual:
      return "manual";
  }
  return "unknown";
}

}  // namespace inferd::repository
