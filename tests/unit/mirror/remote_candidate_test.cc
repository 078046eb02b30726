// The v2 binary request the remote candidate writes, and the answers it reads.
#include "mirror/remote_candidate.h"

#include <gtest/gtest.h>

#include <cstring>

namespace inferd::mirror {
namespace {

TEST(WriteV2BinaryRequest, TensorsGoAsBinaryBehindTheHeader) {
  scheduler::InferenceRequest r;
  r.id = "7";
  Tensor t = Tensor::Allocate(DataType::kFp32, {1, 2});
  float v[] = {1.5f, -2};
  std::memcpy(t.mutable_data(), v, sizeof(v));
  r.inputs = {{"x", t}};
  std::string body;
  size_t n = WriteV2BinaryRequest(r, "raw", &body);
  EXPECT_EQ(body.substr(0, n),
            R"({"id":"7","inputs":[{"name":"x","datatype":"FP32","shape":[1,2],)"
            R"("parameters":{"binary_data_size":8}}],"parameters":{"binary_data_output":true}})");
  ASSERT_EQ(body.size(), n + 8);
  EXPECT_EQ(std::memcmp(body.data() + n, v, 8), 0);
}

TEST(WriteV2BinaryRequest, RawPayloadsGoAsOneBytesInput) {
  scheduler::InferenceRequest r;
  r.raw = {{"", "ab"}, {"", "c"}};
  std::string body;
  size_t n = WriteV2BinaryRequest(r, "image", &body);
  EXPECT_NE(body.substr(0, n).find(R"("name":"image","datatype":"BYTES","shape":[2])"),
            std::string::npos);
  EXPECT_EQ(body.substr(n), std::string("\x02\0\0\0ab\x01\0\0\0c", 11));
}

TEST(ParseV2Response, BinaryAndJsonOutputs) {
  std::string header =
      R"({"model_name":"m","outputs":[{"name":"y","datatype":"FP32","shape":[1,2],)"
      R"("parameters":{"binary_data_size":8}},{"name":"z","datatype":"INT64","shape":[2],)"
      R"("data":[3,4]}]})";
  float y[] = {0.25f, 8};
  std::string body = header + std::string(reinterpret_cast<const char*>(y), 8);
  auto out = ParseV2Response(body, header.size());
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "y");
  EXPECT_EQ((*out)[0].tensor.data_as<float>()[1], 8);
  EXPECT_EQ((*out)[1].tensor.data_as<int64_t>()[1], 4);
}

TEST(ParseV2Response, BadAnswersSayWhatIsWrong) {
  EXPECT_FALSE(ParseV2Response("not json", std::string::npos).ok());
  EXPECT_FALSE(ParseV2Response(R"({"outputs":[{"name":"y","datatype":"FP32","shape":[2],)"
                               R"("parameters":{"binary_data_size":8}}]})",
                               std::string::npos)
                   .ok());  // binary data past the body
  auto wrong = ParseV2Response(R"({"outputs":[{"name":"y","datatype":"FP32","shape":[3],)"
                               R"("data":[1,2]}]})",
                               std::string::npos);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("2 data elements"), std::string::npos);
}

}  // namespace
}  // namespace inferd::mirror
