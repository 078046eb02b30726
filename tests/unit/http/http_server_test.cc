// End-to-end tests of the HTTP front end over real sockets, with the fake
// (echo) backend behind the real scheduler and repository.
#include "http/http_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/fake/fake_backend.h"
#include "http_test_client.h"

namespace inferd::http {
namespace {

namespace fs = std::filesystem;
using testing::TestClient;

constexpr char kEcho[] =
    "max_batch_size: 4\n"
    "inputs: [{name: x, datatype: FP32, shape: [2]}]\n"
    "outputs: [{name: y, datatype: FP32, shape: [2]}]\n";

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() / ("inferd_http_test_" + std::to_string(::getpid()));
    fs::remove_all(store_);
    AddModel("echo", kEcho, {1});
    AddModel("broken", "max_batch_size: -3\n", {1});
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    so.metrics = &registry_;
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
    repository::ModelRepository::Options ro;
    ro.store_dir = store_.string();
    ro.backend = &backend_;
    ro.scheduler = scheduler_.get();
    repo_ = std::move(*repository::ModelRepository::Create(ro));
    repo_->StartEagerLoads();
    repo_->WaitForStartup(TimePoint::max());
    inference_ = StartServer(HttpServer::Role::kInference, 1 << 20);
    management_ = StartServer(HttpServer::Role::kManagement, 1 << 20);
    metrics_ = StartServer(HttpServer::Role::kMetrics, 1 << 20);
  }

  void TearDown() override {
    inference_->Stop();
    management_->Stop();
    metrics_->Stop();
    fs::remove_all(store_);
  }

  std::unique_ptr<HttpServer> StartServer(HttpServer::Role role, size_t body_limit,
                                          int threads = 1) {
    HttpServer::Options o;
    o.role = role;
    o.body_limit = body_limit;
    o.threads = threads;
    serving::Services s;
    s.repository = repo_.get();
    s.metrics = &registry_;
    s.request_metrics = &request_metrics_;
    s.ready = [this] { return ready_.load(); };
    auto server = HttpServer::Create(o, s);
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    EXPECT_NE((*server)->port(), 0);
    (*server)->Start();
    return std::move(*server);
  }

  void AddModel(const std::string& name, const std::string& config, std::vector<int> versions) {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream(store_ / name / std::to_string(v) / "model.pt") << "fake";
    }
  }

  fs::path store_;
  metrics::Registry registry_;
  serving::RequestMetrics request_metrics_{&registry_};
  backend::FakeBackend backend_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<repository::ModelRepository> repo_;
  std::unique_ptr<HttpServer> inference_, management_, metrics_;
  std::atomic<bool> ready_{true};
};

TEST_F(HttpServerTest, PingAndHealth) {
  TestClient c(inference_->port());
  auto r = c.Send("GET", "/ping");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"status":"Healthy"})");
  EXPECT_EQ(c.Send("GET", "/v2/health/live").status, 200);
  EXPECT_EQ(c.Send("GET", "/v2/health/ready").status, 200);
  ready_ = false;
  EXPECT_EQ(c.Send("GET", "/v2/health/ready").status, 503);
  EXPECT_EQ(c.Send("GET", "/ping").status, 503);
  auto meta = c.Send("GET", "/v2");
  EXPECT_NE(meta.body.find(R"("name":"inferd")"), std::string::npos);
}

TEST_F(HttpServerTest, PredictionsWithAndWithoutBatchDim) {
  TestClient c(inference_->port());
  auto one = c.Send("POST", "/predictions/echo", "[1.5, -2]");
  EXPECT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.body, "[1.5,-2]");
  auto batch = c.Send("POST", "/predictions/echo/1", "[[1,2],[3,4.25]]");
  EXPECT_EQ(batch.status, 200) << batch.body;
  EXPECT_EQ(batch.body, "[[1,2],[3,4.25]]");
  auto obj = c.Send("POST", "/predictions/echo", R"({"x": [0.1, 0.2]})");
  EXPECT_EQ(obj.body, "[0.1,0.2]");
  auto put = c.Send("PUT", "/predictions/echo", "[7,8]");  // curl -T
  EXPECT_EQ(put.status, 200);
  EXPECT_EQ(put.body, "[7,8]");
}

// Bodies are read with room for up to 64 KiB at a time (Connection::OnHeader)
// and an idle connection gives that room back: bodies of every size, one after
// another and pipelined in one write, each arrive whole and in order.
TEST_F(HttpServerTest, BodiesOfEverySizeArriveWholeAlsoPipelined) {
  TestClient c(inference_->port());
  auto padded = [](const std::string& json, size_t pad) {
    return json.substr(0, json.size() - 1) + std::string(pad, ' ') + "]";
  };
  for (size_t pad : {0ul, 600ul, 70000ul, 300000ul, 10ul}) {
    auto r = c.Send("POST", "/predictions/echo", padded("[1.5, -2]", pad));
    EXPECT_EQ(r.status, 200) << pad << ": " << r.body;
    EXPECT_EQ(r.body, "[1.5,-2]") << pad;
  }
  std::string two;
  for (auto [values, pad] : {std::pair{"[3, 4]", 200000ul}, std::pair{"[5, 6]", 0ul}}) {
    const std::string body = padded(values, pad);
    two += "POST /predictions/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  boost::asio::write(c.socket(), boost::asio::buffer(two));
  auto first = c.Read();
  auto second = c.Read();
  EXPECT_EQ(first.body, "[3,4]");
  EXPECT_EQ(second.body, "[5,6]");
}

TEST_F(HttpServerTest, V2JsonInfer) {
  TestClient c(inference_->port());
  auto r = c.Send(
      "POST", "/v2/models/echo/infer",
      R"({"id":"7","inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[1,2,3,4]}]})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"model_name":"echo","model_version":"1","id":"7","outputs":[)"
                    R"({"name":"y","datatype":"FP32","shape":[2,2],"data":[1,2,3,4]}]})");
  auto v = c.Send("POST", "/v2/models/echo/versions/1/infer",
                  R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[[5,6]]}]})");
  EXPECT_EQ(v.status, 200) << v.body;
}

TEST_F(HttpServerTest, V2BinaryInferRoundtrip) {
  TestClient c(inference_->port());
  std::string json =
      R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}],)"
      R"("outputs":[{"name":"y","parameters":{"binary_data":true}}]})";
  float in[2] = {0.1f, -7.5f};
  std::string body = json + std::string(reinterpret_cast<char*>(in), 8);
  auto r = c.Send("POST", "/v2/models/echo/infer", body,
                  {{"Inference-Header-Content-Length", std::to_string(json.size())},
                   {"Content-Type", "application/octet-stream"}});
  ASSERT_EQ(r.status, 200) << r.body;
  size_t n = std::stoul(r.Header("Inference-Header-Content-Length"));
  EXPECT_NE(r.body.substr(0, n).find(R"("binary_data_size":8)"), std::string::npos);
  ASSERT_EQ(r.body.size(), n + 8);
  float out[2];
  std::memcpy(out, r.body.data() + n, 8);
  EXPECT_EQ(out[0], 0.1f);
  EXPECT_EQ(out[1], -7.5f);
}

TEST_F(HttpServerTest, ErrorsAreJsonAndTheConnectionKeepsServing) {
  TestClient c(inference_->port());
  auto unknown = c.Send("POST", "/predictions/nope", "[1,2]");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.body.find("unknown model 'nope'"), std::string::npos) << unknown.body;
  auto shape =
      c.Send("POST", "/v2/models/echo/infer",
             R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]})");
  EXPECT_EQ(shape.status, 400);
  EXPECT_EQ(shape.body.rfind(R"({"error":)", 0), 0u) << shape.body;
  auto malformed = c.Send("POST", "/v2/models/echo/infer", "{nope");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(malformed.body.find("malformed JSON"), std::string::npos);
  auto version = c.Send("POST", "/predictions/echo/9", "[1,2]");
  EXPECT_EQ(version.status, 404) << version.body;
  auto bad_version = c.Send("POST", "/predictions/echo/x", "[1,2]");
  EXPECT_EQ(bad_version.status, 400);
  auto method = c.Send("GET", "/v2/models/echo/infer");
  EXPECT_EQ(method.status, 405);
  auto route = c.Send("GET", "/nothing/here");
  EXPECT_EQ(route.status, 404);
  EXPECT_EQ(c.Send("POST", "/predictions/echo", "[1,2]").status, 200);
}

TEST_F(HttpServerTest, BodyOverTheLimitIs413) {
  auto small = StartServer(HttpServer::Role::kInference, 16);
  TestClient c(small->port());
  auto r = c.Send("POST", "/predictions/echo", std::string(100, ' '));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find("over the limit of 16 bytes"), std::string::npos) << r.body;
  small->Stop();
}

TEST_F(HttpServerTest, ALargeBodyStillGets413NotAReset) {
  // The client writes all of a body past the limit before reading: the server
  // must drain it (lingering close) so the 413 reaches the client.
  auto small = StartServer(HttpServer::Role::kInference, 1024);
  TestClient c(small->port());
  auto r = c.Send("POST", "/predictions/echo", std::string(8 << 20, '1'));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.Header("Connection"), "close");
  small->Stop();
}

TEST_F(HttpServerTest, StopClosesOpenConnections) {
  auto server = StartServer(HttpServer::Role::kInference, 1024);
  TestClient c(server->port());
  EXPECT_EQ(c.Send("GET", "/ping").status, 200);
  server->Stop();
  boost::beast::error_code ec;
  char byte;
  c.socket().read_some(boost::asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset)
      << ec.message();
}

TEST_F(HttpServerTest, ExpectContinueIsAnswered) {
  TestClient c(inference_->port());
  namespace bhttp = boost::beast::http;
  bhttp::request<bhttp::string_body> req(bhttp::verb::post, "/predictions/echo", 11);
  req.set(bhttp::field::host, "x");
  req.set(bhttp::field::expect, "100-continue");
  req.body() = "[3,4]";
  req.prepare_payload();
  bhttp::request_serializer<bhttp::string_body> sr(req);
  bhttp::write_header(c.socket(), sr);
  auto cont = c.Read();
  EXPECT_EQ(cont.status, 100);
  bhttp::write(c.socket(), sr);
  auto r = c.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "[3,4]");
}

TEST_F(HttpServerTest, ModelMetadataAndReadiness) {
  TestClient c(inference_->port());
  auto meta = c.Send("GET", "/v2/models/echo");
  EXPECT_EQ(meta.status, 200);
  EXPECT_NE(meta.body.find(R"("inputs":[{"name":"x","datatype":"FP32","shape":[-1,2]}])"),
            std::string::npos)
      << meta.body;
  EXPECT_NE(meta.body.find(R"("versions":["1"])"), std::string::npos);
  EXPECT_EQ(c.Send("GET", "/v2/models/echo/ready").status, 200);
  EXPECT_EQ(c.Send("GET", "/v2/models/echo/versions/1/ready").status, 200);
  EXPECT_EQ(c.Send("GET", "/v2/models/echo/versions/2").status, 404);
  EXPECT_EQ(c.Send("GET", "/v2/models/nope/ready").status, 404);
  auto broken = c.Send("GET", "/v2/models/broken/ready");
  EXPECT_NE(broken.status, 200);
  EXPECT_NE(broken.body.find("max_batch_size"), std::string::npos) << broken.body;
  auto broken_meta = c.Send("GET", "/v2/models/broken");
  EXPECT_NE(broken_meta.body.find("max_batch_size"), std::string::npos) << broken_meta.body;
}

TEST_F(HttpServerTest, ManagementListsUnloadsAndLoads) {
  TestClient m(management_->port());
  TestClient c(inference_->port());
  auto list = m.Send("GET", "/models");
  EXPECT_EQ(list.status, 200);
  EXPECT_NE(
      list.body.find(R"({"modelName":"echo","modelUrl":"echo","state":"READY","load":"eager")"),
      std::string::npos)
      << list.body;
  auto describe = m.Send("GET", "/models/echo");
  EXPECT_NE(describe.body.find(R"("status":"READY")"), std::string::npos) << describe.body;
  EXPECT_NE(describe.body.find(R"("batchSize":4)"), std::string::npos);
  EXPECT_EQ(m.Send("DELETE", "/models/echo").status, 200);
  EXPECT_NE(c.Send("POST", "/predictions/echo", "[1,2]").status, 200);
  auto load = m.Send("POST", "/models?url=echo.mar");
  EXPECT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(c.Send("POST", "/predictions/echo", "[1,2]").status, 200);
  EXPECT_EQ(m.Send("POST", "/models").status, 400);
  EXPECT_EQ(m.Send("POST", "/models?url=nope").status, 404);
  EXPECT_EQ(m.Send("PUT", "/models/echo?min_worker=2").status, 200);
  auto index = m.Send("POST", "/v2/repository/index");
  EXPECT_NE(index.body.find(R"({"name":"echo","version":"1","state":"READY","reason":"")"),
            std::string::npos)
      << index.body;
  EXPECT_EQ(m.Send("POST", "/v2/repository/models/echo/unload").status, 200);
  EXPECT_EQ(m.Send("POST", "/v2/repository/models/echo/load").status, 200);
  // Inference routes are not on the management port.
  EXPECT_EQ(m.Send("POST", "/predictions/echo", "[1,2]").status, 404);
}

// A quarantined version (the scheduler gave up a forward) over real sockets:
// 503 with the reason, not ready, QUARANTINED everywhere, until loaded again.
TEST_F(HttpServerTest, AQuarantinedModelAnswers503WithItsReasonUntilLoaded) {
  ASSERT_TRUE(repo_->Quarantine("echo", 1, "forward given up after 61000 ms").ok());
  TestClient c(inference_->port());
  TestClient m(management_->port());
  for (const auto& r : {c.Send("POST", "/predictions/echo", "[1,2]"),
                        c.Send("GET", "/v2/models/echo/ready")}) {
    EXPECT_EQ(r.status, 503);
    EXPECT_NE(r.body.find("QUARANTINED: forward given up after 61000 ms"), std::string::npos)
        << r.body;
  }
  const std::string shown = R"("QUARANTINED","reason":"forward given up after 61000 ms")";
  EXPECT_NE(c.Send("GET", "/v2/models/echo").body.find(R"("state":)" + shown), std::string::npos);
  EXPECT_NE(m.Send("GET", "/models").body.find(R"("state":)" + shown), std::string::npos);
  EXPECT_NE(m.Send("GET", "/models/echo").body.find(R"("status":)" + shown), std::string::npos);
  EXPECT_EQ(m.Send("POST", "/models?url=echo").status, 200);
  EXPECT_EQ(c.Send("POST", "/predictions/echo", "[1,2]").status, 200);
  EXPECT_EQ(c.Send("GET", "/v2/models/echo/ready").status, 200);
}

TEST_F(HttpServerTest, MetricsCountRequests) {
  TestClient c(inference_->port());
  EXPECT_EQ(c.Send("POST", "/predictions/echo", "[1,2]").status, 200);
  EXPECT_EQ(c.Send("POST", "/predictions/echo", "[1,2,3]").status, 400);
  TestClient m(metrics_->port());
  auto r = m.Send("GET", "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(
      r.body.find(R"(inferd_requests_total{code="OK",model="echo",protocol="http",version="1"} 1)"),
      std::string::npos)
      << r.body;
  EXPECT_NE(
      r.body.find(
          R"(inferd_requests_total{code="INVALID_ARGUMENT",model="echo",protocol="http",version="1"} 1)"),
      std::string::npos);
  EXPECT_NE(r.body.find(R"(inferd_request_duration_seconds_count{model="echo"} 2)"),
            std::string::npos);
  EXPECT_NE(r.body.find(R"(inferd_compute_duration_seconds_count{model="echo"} 1)"),
            std::string::npos);
}

TEST_F(HttpServerTest, UnknownModelsAndVersionsDoNotGrowTheLabels) {
  TestClient c(inference_->port());
  EXPECT_EQ(c.Send("POST", "/predictions/random123", "[1,2]").status, 404);
  EXPECT_EQ(c.Send("POST", "/predictions/echo/77", "[1,2]").status, 404);
  TestClient m(metrics_->port());
  auto r = m.Send("GET", "/metrics");
  EXPECT_EQ(r.body.find("random123"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("\"77\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"(inferd_requests_total{code="NOT_FOUND",model="",protocol="http"} 1)"),
            std::string::npos);
  EXPECT_NE(
      r.body.find(R"(inferd_requests_total{code="NOT_FOUND",model="echo",protocol="http"} 1)"),
      std::string::npos);
}

TEST_F(HttpServerTest, SeveralNetworkThreadsServeSeveralConnections) {
  auto server = StartServer(HttpServer::Role::kInference, 1 << 20, /*threads=*/3);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      TestClient c(server->port());
      for (int i = 0; i < 25; ++i) {
        std::string body = "[" + std::to_string(t) + "," + std::to_string(i) + "]";
        auto r = c.Send("POST", "/predictions/echo", body);
        if (r.status == 200 && r.body == body)
          ++ok;
        else
          ADD_FAILURE() << body << " -> " << r.status << " " << r.body;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 100);
  server->Stop();
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  TestClient c(inference_->port());
  auto r = c.Send("GET", "/ping", "", {{"Connection", "close"}});
  EXPECT_EQ(r.status, 200);
  boost::beast::error_code ec;
  char byte;
  c.socket().read_some(boost::asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::eof);
}

TEST(HttpServerCreate, RefusesABusyPort) {
  metrics::Registry registry;
  HttpServer::Options o;
  o.role = HttpServer::Role::kMetrics;
  serving::Services services;
  services.metrics = &registry;
  auto first = HttpServer::Create(o, services);
  ASSERT_TRUE(first.ok());
  o.port = (*first)->port();
  auto second = HttpServer::Create(o, services);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen on the metrics port"), std::string::npos);
}

}  // namespace
}  // namespace inferd::http
