// MirrorSet: the server's mirrors, one per primary model at most, set from
// the store's configs (`mirror:`) at start and through the management API
// at run time (PUT / DELETE /models/{m}/mirror).
//
// It is the request path's RequestTap (serving/services.h): for a
// model without a mirror a request costs one atomic load (no mirror at all)
// or one map look-up under a mutex. Every method may be called from any
// thread; a mirror replaced or removed while its copies are out drops their
// answers (Mirror).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "config/mirror_config.h"
#include "metrics/registry.h"
#include "mirror/mirror.h"
#include "repository/model_repository.h"
#include "serving/inference_call.h"

namespace inferd::mirror {

class MirrorSet : public serving::RequestTap {
 public:
  struct Options {
    repository::ModelRepository* repository = nullptr;  // required
    metrics::Registry* metrics = nullptr;               // may be null
  };
  explicit MirrorSet(const Options& options);
  ~MirrorSet() override;

  // Sets or replaces `model`'s mirror (its figures start again from 0).
  // kNotFound: no such primary, or no such local candidate; kInvalidArgument:
  // a bad config; kUnavailable: a remote host that does not resolve.
  Status Set(const std::string& model, const config::MirrorConfig& config);
  // kNotFound when `model` has no mirror.
  Status Remove(const std::string& model);
  // kNotFound when `model` has no mirror.
  StatusOr<MirrorReport> Report(const std::string& model) const;
  std::vector<std::string> Models() const;

  // Sets the mirror of every model of the store whose config has `mirror:`;
  // returns one line per mirror that could not be set (the server still starts).
  std::vector<std::string> SetFromConfigs();

  scheduler::Completion Tap(const repository::ModelHandle& model,
                            const scheduler::InferenceRequest& request,
                            scheduler::Completion done) override;

 private:
  const Options options_;
  std::atomic<bool> any_{false};
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Mirror>> mirrors_ GUARDED_BY(mu_);
};

}  // namespace inferd::mirror
