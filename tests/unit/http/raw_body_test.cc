#include "http/raw_body.h"

#include <gtest/gtest.h>

namespace inferd::http {
namespace {

HttpRequest Request(std::string content_type, std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.content_type = std::move(content_type);
  *r.body = std::move(body);
  return r;
}

TEST(RawBody, TakesTheBodyAsIs) {
  auto raw = ExtractRawInput(Request("image/jpeg", std::string("\xff\xd8\xff\0x", 5)));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->content_type, "image/jpeg");
  EXPECT_EQ(raw->bytes, std::string("\xff\xd8\xff\0x", 5));
  EXPECT_FALSE(ExtractRawInput(Request("image/jpeg", "")).ok());
}

TEST(RawBody, MultipartPrefersTheDataField) {
  std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nnope\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"data\"; filename=\"cat.jpg\"\r\n"
      "Content-Type: image/jpeg\r\n\r\nJPEG\r\nBYTES\r\n"
      "--XyZ--\r\n";
  auto raw = ExtractRawInput(Request("multipart/form-data; boundary=XyZ", body));
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->content_type, "image/jpeg");
  EXPECT_EQ(raw->bytes, "JPEG\r\nBYTES");
}

TEST(RawBody, MultipartFallsBackToTheFirstFile) {
  std::string body =
      "--b\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\nx\r\n"
      "--b\r\nContent-Disposition: form-data; name=\"img\"; filename=\"a.png\"\r\n\r\nPNG\r\n"
      "--b--";
  auto raw = ExtractRawInput(Request("multipart/form-data; boundary=\"b\"", body));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->bytes, "PNG");
}

TEST(RawBody, MultipartErrors) {
  EXPECT_FALSE(ExtractRawInput(Request("multipart/form-data", "x")).ok());
  EXPECT_FALSE(ExtractRawInput(Request("multipart/form-data; boundary=b", "junk")).ok());
  auto open =
      ExtractRawInput(Request("multipart/form-data; boundary=b",
                              "--b\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\nx"));
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("no closing boundary"), std::string::npos);
}

TEST(RawBody, JsonBase64AndText) {
  auto b64 = ExtractRawInput(Request("application/json", R"({"b64":"aGVsbG8gd29ybGQ="})"));
  ASSERT_TRUE(b64.ok()) << b64.status().ToString();
  EXPECT_EQ(b64->bytes, "hello world");
  auto text = ExtractRawInput(Request("application/json; charset=utf-8", R"({"data":"hi"})"));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->bytes, "hi");
  EXPECT_EQ(text->content_type, "text/plain");
  EXPECT_FALSE(ExtractRawInput(Request("application/json", R"({"b64":"!!"})")).ok());
  EXPECT_FALSE(ExtractRawInput(Request("application/json", R"([1,2])")).ok());
}

TEST(Base64, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(*DecodeBase64("TWE="), "Ma");
  EXPECT_EQ(*DecodeBase64("TWE"), "Ma");
  EXPECT_EQ(*DecodeBase64("TWFu\nTWFu"), "ManMan");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("T").has_value());
  EXPECT_FALSE(DecodeBase64("TW=E").has_value());
}

TEST(HeaderParam, FindsQuotedAndPlainValues) {
  EXPECT_EQ(HeaderParam("multipart/form-data; boundary=abc", "boundary"), "abc");
  EXPECT_EQ(HeaderParam("form-data; name=\"data\"; filename=\"x.jpg\"", "filename"), "x.jpg");
  EXPECT_EQ(HeaderParam("form-data; name=\"data\"", "filename"), "");
}

}  // namespace
}  // namespace inferd::http
