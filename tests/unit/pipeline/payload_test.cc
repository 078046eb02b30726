#include "pipeline/payload.h"

#include <gtest/gtest.h>

namespace inferd::pipeline {
namespace {

scheduler::RawInput Raw(std::string content_type, std::string bytes) {
  return {std::move(content_type), std::move(bytes)};
}

TEST(PayloadTest, PlainBodyPassesThroughWithoutCopy) {
  auto raw = Raw("Image/JPEG; q=1", "\xFF\xD8\xFF...");
  std::string storage;
  auto p = UnwrapPayload(raw, &storage);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->media_type, "image/jpeg");
  EXPECT_EQ(p->bytes.data(), raw.bytes.data());
}

TEST(PayloadTest, MultipartPicksTheDataField) {
  std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"other\"; filename=\"a.txt\"\r\n"
      "Content-Type: text/plain\r\n\r\nnot this\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"data\"; filename=\"cat.png\"\r\n"
      "Content-Type: image/png\r\n\r\n\x89PNG\r\n--XyZ--\r\n";
  std::string storage;
  auto raw = Raw("multipart/form-data; boundary=\"XyZ\"", body);  // the payload points into it
  auto p = UnwrapPayload(raw, &storage);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->media_type, "image/png");
  EXPECT_EQ(p->bytes, "\x89PNG");
}

TEST(PayloadTest, MultipartFallsBackToTheFirstFile) {
  std::string body =
      "preamble\r\n--b\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\n{}\r\n"
      "--b\r\nContent-Disposition: form-data; name=\"img\"; "
      "filename=\"x.jpg\"\r\n\r\nJPEGBYTES\r\n--b--";
  std::string storage;
  auto raw = Raw("multipart/form-data; boundary=b", body);
  auto p = UnwrapPayload(raw, &storage);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bytes, "JPEGBYTES");
  EXPECT_EQ(p->media_type, "");
}

TEST(PayloadTest, MultipartPartWithoutHeaders) {
  std::string storage;
  auto raw = Raw("multipart/form-data; boundary=b", "--b\r\n\r\nRAW\r\n--b--\r\n");
  auto p = UnwrapPayload(raw, &storage);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bytes, "RAW");
}

TEST(PayloadTest, BrokenMultipartIsAnError) {
  std::string storage;
  EXPECT_EQ(UnwrapPayload(Raw("multipart/form-data", "x"), &storage).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(UnwrapPayload(
                Raw("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: x\r\n\r\nabc"),
                &storage)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(PayloadTest, JsonBase64AndText) {
  std::string storage;
  auto p = UnwrapPayload(Raw("application/json", R"({"b64": "aGVsbG8gd29ybGQ="})"), &storage);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bytes, "hello world");
  p = UnwrapPayload(Raw("application/json", R"({"text": "Hello, caf\u00e9"})"), &storage);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bytes, "Hello, caf\xC3\xA9");
  EXPECT_EQ(p->media_type, "text/plain");
  EXPECT_FALSE(UnwrapPayload(Raw("application/json", R"({"b64": 3})"), &storage).ok());
  EXPECT_FALSE(UnwrapPayload(Raw("application/json", R"({"b64": "@@@"})"), &storage).ok());
  EXPECT_FALSE(UnwrapPayload(Raw("application/json", "{not json"), &storage).ok());
}

TEST(PayloadTest, Base64Variants) {
  EXPECT_EQ(*DecodeBase64("aGk="), "hi");
  EXPECT_EQ(*DecodeBase64("aGk"), "hi");
  EXPECT_EQ(*DecodeBase64("+/+/"), *DecodeBase64("-_-_"));
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8="), "hello");
  EXPECT_FALSE(DecodeBase64("a").ok());
  EXPECT_FALSE(DecodeBase64("aG=k").ok());
}

}  // namespace
}  // namespace inferd::pipeline
