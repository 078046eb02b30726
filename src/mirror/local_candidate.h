// LocalCandidate: a model of the same store as a mirror's candidate.
//
// A copy goes through the same request path as a client's request
// (serving::AcquireModel, serving::Submit: a lazy or evicted candidate is
// loaded on demand) with the lowest priority (scheduler::kMaxPriority) and
// without a RequestTap (mirrored traffic is not mirrored again) and without
// request metrics (it is not a client's request: inferd_requests_total
// counts only those). Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "mirror/candidate.h"
#include "repository/model_repository.h"

namespace inferd::mirror {

class LocalCandidate : public Candidate {
 public:
  // `to`: "name" or "name:version". kNotFound when the store has no such
  // model; kInvalidArgument for a malformed version.
  static StatusOr<std::shared_ptr<LocalCandidate>> Create(repository::ModelRepository* repository,
                                                          const std::string& to);

  const char* kind() const override { return "local"; }
  void Send(const scheduler::InferenceRequest& request, TimePoint deadline,
            CandidateDone done) override;

 private:
  LocalCandidate(repository::ModelRepository* repository, std::string name, std::string version)
      : repository_(repository), name_(std::move(name)), version_(std::move(version)) {}

  repository::ModelRepository* repository_;
  const std::string name_;
  const std::string version_;  // "" = the default version
};

}  // namespace inferd::mirror
