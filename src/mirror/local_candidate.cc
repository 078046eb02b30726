#include "mirror/local_candidate.h"

#include "serving/inference_call.h"

namespace inferd::mirror {

StatusOr<std::shared_ptr<LocalCandidate>> LocalCandidate::Create(
    repository::ModelRepository* repository, const std::string& to) {
  std::string name = to, version;
  if (size_t colon = to.find(':'); colon != std::string::npos) {
    name = to.substr(0, colon);
    version = to.substr(colon + 1);
    auto parsed = serving::ParseModelVersion(version);
    if (!parsed.ok() || !parsed->has_value()) {
      return InvalidArgument("mirror.to: '" + to + "': expected name or name:version (a positive "
                             "integer), or http://host:port/v2/models/NAME");
    }
  }
  auto status = repository->GetStatus(name);
  if (!status.ok()) {
    return NotFound("mirror.to: the store has no model '" + name + "' (" +
                    status.status().message() + ")");
  }
  return std::shared_ptr<LocalCandidate>(new LocalCandidate(repository, name, version));
}

void LocalCandidate::Send(const scheduler::InferenceRequest& request, TimePoint deadline,
                          CandidateDone done) {
  serving::Services services;
  services.repository = repository_;  // nothing counted, nothing tapped
  serving::Call call;
  call.received = Clock::Real()->Now();
  call.deadline = deadline;
  scheduler::InferenceRequest copy;
  copy.id = request.id;
  copy.inputs = request.inputs;
  copy.raw = request.raw;
  copy.priority = request.priority;
  serving::AcquireModel(
      services, call, name_, version_,
      [services, call, copy = std::move(copy),
       done = std::move(done)](StatusOr<serving::AcquiredModel> model) mutable {
        if (!model.ok()) return done(model.status());
        serving::Submit(services, model->handle, std::move(copy), call,
                        [done](StatusOr<scheduler::InferenceResponse> answer) {
                          if (!answer.ok()) return done(answer.status());
                          done(std::move(answer->outputs));
                        });
      });
}

}  // namespace inferd::mirror
