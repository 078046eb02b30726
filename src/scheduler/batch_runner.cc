#include "scheduler/batch_runner.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "scheduler/batch_assembly.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {
namespace {

int64_t MicrosBetween(TimePoint a, TimePoint b) {
  return std::chrono::duration_cast<std::chrono::microseconds>(b - a).count();
}

// What an exception in flight says about itself, without throwing again.
std::string Describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

// One request of the batch on its way through the stages.
struct BatchRunner::Pending {
  QueuedRequest* queued;
  int64_t preprocess_us = 0;
  bool answered = false;

  void Answer(StatusOr<InferenceResponse> result) {
    answered = true;
    try {
      queued->done(std::move(result));
    } catch (...) {
      // The completion belongs to the front end; a throw there must not
      // answer this request a second time or end the executor.
      spdlog::error("request '{}': its completion threw: {}", queued->request.id,
                    Describe(std::current_exception()));
    }
  }
};

BatchRunner::BatchRunner(Options options) : options_(std::move(options)) {}

void BatchRunner::Run(std::vector<QueuedRequest>& requests, TimePoint start) {
  std::vector<Pending> pending;
  pending.reserve(requests.size());
  for (auto& r : requests) pending.push_back({&r});
  const char* stage = "batch set-up";
  try {
    RunStages(pending, start, &stage);
    return;
  } catch (...) {
    const std::string what = Describe(std::current_exception());
    spdlog::error("model '{}': {} threw: {}", options_.name, stage, what);
    Status failed = Internal("model '" + options_.name + "': " + stage + " threw: " + what);
    for (auto& p : pending) {
      if (!p.answered) p.Answer(failed);
    }
  }
}

void BatchRunner::RunStages(std::vector<Pending>& pending, TimePoint start, const char** stage) {
  const std::string model = "model '" + options_.name + "'";
  Clock& clock = *options_.clock;
  // Pre-processing, per request: a request that fails or throws is answered
  // alone; the others go on.
  std::vector<Pending*> live;
  for (auto& p : pending) {
    InferenceRequest& request = p.queued->request;
    if (!request.raw.empty() && options_.hooks.preprocess) {
      const TimePoint t0 = clock.Now();
      Status st;
      try {
        st = options_.hooks.preprocess(request);
      } catch (...) {
        const std::string what = Describe(std::current_exception());
        spdlog::error("{}: pre-processing threw: {}", model, what);
        st = Internal(model + ": pre-processing threw: " + what);
      }
      p.preprocess_us = MicrosBetween(t0, clock.Now());
      if (!st.ok()) {
        p.Answer(st);
        continue;
      }
    }
    live.push_back(&p);
  }
  if (live.empty()) return;

  *stage = "batch assembly";
  std::vector<const std::vector<NamedTensor>*> inputs;
  inputs.reserve(live.size());
  for (auto* p : live) inputs.push_back(&p->queued->request.inputs);
  auto assembled = AssembleBatch(options_.config, inputs);
  if (!assembled.ok()) {
    for (auto* p : live) p->Answer(assembled.status());
    return;
  }
  int items = 0;
  for (int n : assembled->items) items += n;

  *stage = "the model's forward()";
  const TimePoint compute_start = clock.Now();
  auto outputs = options_.model->Execute(assembled->inputs);
  const TimePoint compute_end = clock.Now();
  if (!outputs.ok()) {
    Status st = outputs.status().WithContext(model);
    for (auto* p : live) p->Answer(st);
    return;
  }

  *stage = "splitting the outputs";
  auto split = SplitOutputs(*assembled, *outputs);
  if (!split.ok()) {
    Status st = split.status().WithContext(model);
    for (auto* p : live) p->Answer(st);
    return;
  }

  *stage = "post-processing";
  for (size_t i = 0; i < live.size(); ++i) {
    Pending& p = *live[i];
    InferenceResponse response;
    response.id = p.queued->request.id;
    response.outputs = std::move((*split)[i]);
    response.queue_us = MicrosBetween(p.queued->request.enqueue_time, start);
    response.preprocess_us = p.preprocess_us;
    response.compute_us = MicrosBetween(compute_start, compute_end);
    response.batch_size = items;
    if (options_.hooks.postprocess) {
      Status st;
      try {
        st = options_.hooks.postprocess(response);
      } catch (...) {
        const std::string what = Describe(std::current_exception());
        spdlog::error("{}: post-processing threw: {}", model, what);
        st = Internal(model + ": post-processing threw: " + what);
      }
      if (!st.ok()) {
        p.Answer(st);
        continue;
      }
    }
    p.Answer(std::move(response));
  }
}

}  // namespace inferd::scheduler
