// The `mirror:` key of config.yaml.
#include "config/mirror_config.h"

#include <gtest/gtest.h>

#include "config/model_config.h"

namespace inferd::config {
namespace {

const char* kBase = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";

TEST(MirrorConfig, ParsedWithDefaults) {
  auto c = ParseModelConfig(std::string(kBase) + "mirror: {to: 'b:2', fraction: 0.5}\n", "f", "a");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->mirror.has_value());
  EXPECT_EQ(c->mirror->to, "b:2");
  EXPECT_EQ(c->mirror->fraction, 0.5);
  EXPECT_EQ(c->mirror->max_in_flight, 8);
  EXPECT_FALSE(IsRemoteCandidate(c->mirror->to));
  EXPECT_TRUE(IsRemoteCandidate("http://h:1/v2/models/b"));
  EXPECT_FALSE(ParseModelConfig(kBase, "f", "a")->mirror.has_value());
}

TEST(MirrorConfig, ErrorsNameTheKey) {
  auto msg = [](const std::string& mirror) {
    auto c = ParseModelConfig(std::string(kBase) + "mirror: " + mirror + "\n", "f.yaml", "a");
    EXPECT_FALSE(c.ok());
    return c.status().message();
  };
  EXPECT_NE(msg("{to: b, fraction: 2}").find("f.yaml: mirror.fraction: expected a number from 0 "
                                             "to 1"),
            std::string::npos);
  EXPECT_NE(msg("{to: b, max_in_flight: 0}").find("mirror.max_in_flight"), std::string::npos);
  EXPECT_NE(msg("{to: b, max_in_flight: x}").find("mirror.max_in_flight: expected a number"),
            std::string::npos);
  EXPECT_NE(msg("{fraction: 0.1}").find("mirror.to"), std::string::npos);
  EXPECT_NE(msg("{to: b, fractoin: 0.1}").find("mirror.fractoin: unknown key"), std::string::npos);
  EXPECT_NE(msg("b").find("mirror: expected a mapping"), std::string::npos);
}

}  // namespace
}  // namespace inferd::config
