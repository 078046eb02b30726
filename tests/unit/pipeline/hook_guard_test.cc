// GuardHooks: an exception thrown inside a pre- or post-processing hook is
// that request's error, not an exception on the executor thread.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "pipeline/model_hooks.h"

namespace inferd::pipeline {
namespace {

TEST(HookGuardTest, ExceptionsBecomeStatuses) {
  scheduler::ModelHooks hooks;
  int calls = 0;
  hooks.preprocess = [&](scheduler::InferenceRequest& r) -> Status {
    ++calls;
    if (r.id == "throw") throw std::runtime_error("cv::Exception: bad Mat");
    if (r.id == "oom") throw std::bad_alloc();
    if (r.id == "int") throw 42;
    return Status::Ok();
  };
  hooks.postprocess = [](scheduler::InferenceResponse&) -> Status {
    throw std::out_of_range("vector::at");
  };
  scheduler::ModelHooks guarded = GuardHooks(hooks);
  scheduler::InferenceRequest req;
  req.id = "throw";
  Status st = guarded.preprocess(req);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_EQ(st.message(), "preprocessing failed: cv::Exception: bad Mat");
  req.id = "oom";
  EXPECT_EQ(guarded.preprocess(req).code(), StatusCode::kUnavailable);
  req.id = "int";
  EXPECT_EQ(guarded.preprocess(req).message(), "preprocessing failed with an unknown exception");
  req.id = "fine";
  EXPECT_TRUE(guarded.preprocess(req).ok());
  EXPECT_EQ(calls, 4);
  scheduler::InferenceResponse resp;
  EXPECT_EQ(guarded.postprocess(resp).message(), "postprocessing failed: vector::at");
  // Absent hooks stay absent (the scheduler tests for them).
  EXPECT_FALSE(GuardHooks(scheduler::ModelHooks{}).preprocess);
}

}  // namespace
}  // namespace inferd::pipeline
