#include "bench/request_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::bench {
namespace {

namespace fs = std::filesystem;

BenchOptions Options(RequestForm form) {
  BenchOptions o;
  o.url = "http://127.0.0.1:8080";
  o.model = "resnet";
  o.form = form;
  return o;
}

ParsedUrl Url() { return *ParseUrl("http://127.0.0.1:8080"); }

TEST(ParseUrl, Forms) {
  auto u = ParseUrl("http://localhost:9000/base/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->port, "9000");
  EXPECT_EQ(u->path_prefix, "/base");
  u = ParseUrl("http://example");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, "80");
  EXPECT_FALSE(ParseUrl("https://x:1").ok());
  EXPECT_FALSE(ParseUrl("127.0.0.1:8080").ok());
  EXPECT_FALSE(ParseUrl("http://:80").ok());
  EXPECT_FALSE(ParseUrl("http://h:8o").ok());
}

TEST(TargetPath, EachForm) {
  BenchOptions o = Options(RequestForm::kRaw);
  EXPECT_EQ(TargetPath(o, ""), "/predictions/resnet");
  o.version = "2";
  EXPECT_EQ(TargetPath(o, "/p"), "/p/predictions/resnet/2");
  o.form = RequestForm::kV2Json;
  EXPECT_EQ(TargetPath(o, ""), "/v2/models/resnet/versions/2/infer");
  o.version.clear();
  o.form = RequestForm::kV2Binary;
  EXPECT_EQ(TargetPath(o, ""), "/v2/models/resnet/infer");
}

TEST(ContentType, FromExtension) {
  EXPECT_EQ(ContentTypeFor("cat.JPG"), "image/jpeg");
  EXPECT_EQ(ContentTypeFor("a/b.jpeg"), "image/jpeg");
  EXPECT_EQ(ContentTypeFor("x.png"), "image/png");
  EXPECT_EQ(ContentTypeFor("x.json"), "application/json");
  EXPECT_EQ(ContentTypeFor("x.bin"), "application/octet-stream");
  EXPECT_EQ(ContentTypeFor("noext"), "application/octet-stream");
}

TEST(Prepare, RawRequestBytes) {
  auto r = RequestSet::Prepare(Options(RequestForm::kRaw), Url(), "cat.jpg", "JPEGDATA");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes,
            "POST /predictions/resnet HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
            "User-Agent: inferd-bench\r\nContent-Type: image/jpeg\r\nContent-Length: 8\r\n\r\n"
            "JPEGDATA");
}

TEST(Prepare, ExtraHttpHeaders) {
  BenchOptions o = Options(RequestForm::kRaw);
  o.http_headers = {"Authorization: Bearer k-0123456789abcdef"};
  auto r = RequestSet::Prepare(o, Url(), "cat.jpg", "JPEGDATA");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->bytes.find("Content-Length: 8\r\nAuthorization: Bearer k-0123456789abcdef\r\n\r\n"),
            std::string::npos);
  o.http_headers = {"Authorization Bearer secret"};
  auto bad = RequestSet::Prepare(o, Url(), "cat.jpg", "JPEGDATA");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos);
  o.http_headers = {"X-A: 1\r\nX-B: 2"};
  EXPECT_FALSE(RequestSet::Prepare(o, Url(), "cat.jpg", "JPEGDATA").ok());
}

TEST(Prepare, V2JsonIsSentAsIs) {
  const std::string body = R"({"inputs":[]})";
  auto r = RequestSet::Prepare(Options(RequestForm::kV2Json), Url(), "req.txt", body);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->bytes.find("POST /v2/models/resnet/infer HTTP/1.1\r\n"), std::string::npos);
  EXPECT_NE(r->bytes.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(r->bytes.substr(r->bytes.size() - body.size()), body);
  EXPECT_EQ(r->bytes.find("Inference-Header-Content-Length"), std::string::npos);
}

TEST(Prepare, V2BinaryHeaderLengthFoundOrGiven) {
  const std::string json = R"( {"inputs":[{"name":"x}{","parameters":{"binary_data_size":4}}]})";
  const std::string body = json + std::string("\x01\x02\x7d\x00", 4);
  BenchOptions o = Options(RequestForm::kV2Binary);
  auto r = RequestSet::Prepare(o, Url(), "req.bin", body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(
      r->bytes.find("Inference-Header-Content-Length: " + std::to_string(json.size()) + "\r\n"),
      std::string::npos)
      << r->bytes;
  o.header_length = 3;
  r = RequestSet::Prepare(o, Url(), "req.bin", body);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->bytes.find("Inference-Header-Content-Length: 3\r\n"), std::string::npos);
  o.header_length = 1000;
  EXPECT_FALSE(RequestSet::Prepare(o, Url(), "req.bin", body).ok());
  o.header_length = -1;
  EXPECT_FALSE(RequestSet::Prepare(o, Url(), "req.bin", "\x01\x02").ok());
}

TEST(JsonHeaderLength, StringsAndNesting) {
  EXPECT_EQ(*JsonHeaderLength("{}rest"), 2u);
  EXPECT_EQ(*JsonHeaderLength(R"({"a":"}\"}","b":[{}]}X)"), 21u);
  EXPECT_FALSE(JsonHeaderLength("{\"a\":1").ok());
  EXPECT_FALSE(JsonHeaderLength("").ok());
}

TEST(Build, FolderIsSortedRoundRobinAndSkipsHidden) {
  const fs::path dir = fs::temp_directory_path() / ("bench_rs_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* name : {"b.png", "a.jpg", ".hidden"}) std::ofstream(dir / name) << name;
  BenchOptions o = Options(RequestForm::kRaw);
  o.input = dir.string();
  auto set = RequestSet::Build(o);
  fs::remove_all(dir);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->size(), 2u);
  EXPECT_NE(set->At(0).bytes.find("image/jpeg"), std::string::npos);
  EXPECT_NE(set->At(1).bytes.find("image/png"), std::string::npos);
  EXPECT_EQ(set->At(2).source, set->At(0).source);
  EXPECT_EQ(set->target(), "/predictions/resnet");
}

TEST(Build, MissingInputIsNotFound) {
  BenchOptions o = Options(RequestForm::kRaw);
  o.input = "/nonexistent/file.jpg";
  auto set = RequestSet::Build(o);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::bench
