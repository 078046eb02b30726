// The mirror report's JSON (the e2e test reads it from the real server).
#include "http/mirror_routes.h"

#include <gtest/gtest.h>

namespace inferd::http {
namespace {

TEST(WriteMirrorReport, NonClassifierOutputsHaveNoTop1) {
  mirror::MirrorReport r;
  r.model = "m";
  r.config.to = "http://h:1/v2/models/c";
  r.candidate_kind = "remote";
  r.mirrored = 3;
  r.dropped = 1;
  r.comparison.compared = 2;
  r.comparison.max_abs_error = 0.5;
  r.comparison.outputs.push_back({"y", 2, 8, 0.5, 0.125, std::nullopt});
  const std::string json = WriteMirrorReport(r);
  EXPECT_NE(json.find(R"("to":"http://h:1/v2/models/c","candidate":"remote")"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("mirrored":3,"compared":2,"mismatched":0,"dropped":1)"), std::string::npos);
  EXPECT_NE(json.find(R"("top1_agreement":null,"max_abs_error":0.5)"), std::string::npos);
  EXPECT_NE(json.find(R"({"name":"y","compared":2,"elements":8,"top1_agreement":null,)"),
            std::string::npos);
  EXPECT_NE(json.find(R"("top_disagreements":[])"), std::string::npos);
}

TEST(WriteMirrorReport, ADisagreementShowsItsInputByReference) {
  mirror::MirrorReport r;
  r.comparison.top1_agreement = 0.75;
  mirror::Disagreement d;
  d.input.seq = 4;
  d.input.id = "req";
  d.input.hash = 0xabc;
  d.input.bytes = 64;
  d.input.head_hex = "00ff";
  d.top1_disagree = 1;
  d.primary_top1 = 2;
  d.candidate_top1 = 5;
  r.comparison.top_disagreements.push_back(d);
  const std::string json = WriteMirrorReport(r);
  EXPECT_NE(json.find(R"("top1_agreement":0.75)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"seq":4,"id":"req","input_fnv1a64":"0000000000000abc","input_bytes":64,)"
                      R"("input_head_hex":"00ff","top1_disagree":1,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("primary_top1":2,"candidate_top1":5)"), std::string::npos);
}

}  // namespace
}  // namespace inferd::http
