// Candidate: where a mirror sends its copies of the primary's requests: a
// model of the same store (local_candidate.h) or a KServe v2 endpoint on
// another server (remote_candidate.h).
//
// Send runs one copied request and calls `done` exactly once, on any thread
// (possibly the calling one), with the candidate's output tensors or why there
// are none: kDeadlineExceeded when `deadline` passed first (counted as a
// timeout), any other code as a candidate error. Send must not block: it is
// called on the executor thread that has just answered the primary.
// Implementations are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/tensor.h"
#include "scheduler/inference_request.h"

namespace inferd::mirror {

using CandidateDone = std::function<void(StatusOr<std::vector<NamedTensor>>)>;

class Candidate {
 public:
  virtual ~Candidate() = default;
  // "local" or "remote".
  virtual const char* kind() const = 0;
  virtual void Send(const scheduler::InferenceRequest& request, TimePoint deadline,
                    CandidateDone done) = 0;
};

}  // namespace inferd::mirror
