// The gRPC front end over a real port, with the generated C++ client, the
// fake (echo) backend behind the real scheduler and repository.
#include "grpc/grpc_server.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/fake/fake_backend.h"
#include "grpc_predict_v2.grpc.pb.h"

namespace inferd::grpc {
namespace {

namespace fs = std::filesystem;
using namespace inference;  // NOLINT

constexpr char kEcho[] =
    "max_batch_size: 4\n"
    "inputs: [{name: x, datatype: FP32, shape: [2]}]\n"
    "outputs: [{name: y, datatype: FP32, shape: [2]}]\n";

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() / ("inferd_grpc_test_" + std::to_string(::getpid()));
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
    // A postprocess hook that holds requests on the executor while a test says so.
    ro.hooks_factory = [this](const config::ModelConfig&,
                              const std::string&) -> StatusOr<scheduler::ModelHooks> {
      scheduler::ModelHooks hooks;
      hooks.postprocess = [this](scheduler::InferenceResponse&) {
        std::unique_lock<std::mutex> lock(mu_);
        ++held_;
        cv_.notify_all();
        cv_.wait(lock, [this] { return !holding_; });
        return Status::Ok();
      };
      return hooks;
    };
    repo_ = std::move(*repository::ModelRepository::Create(ro));
    repo_->StartEagerLoads();
    repo_->WaitForStartup(TimePoint::max());
    GrpcServer::Options o;
    o.stop_grace = std::chrono::milliseconds(200);
    serving::Services services;
    services.repository = repo_.get();
    services.metrics = &registry_;
    services.request_metrics = &request_metrics_;
    services.ready = [this] { return ready_.load(); };
    auto server = GrpcServer::Create(o, services);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    ASSERT_NE(server_->port(), 0);
    server_->Start();
    auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                         ::grpc::InsecureChannelCredentials());
    stub_ = GRPCInferenceService::NewStub(channel);
  }

  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(store_);
  }

  void AddModel(const std::string& name, const std::string& config, std::vector<int> versions) {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream(store_ / name / std::to_string(v) / "model.pt") << "fake";
    }
  }

  static ModelInferRequest EchoRequest(std::vector<float> values, bool raw) {
    ModelInferRequest r;
    r.set_model_name("echo");
    auto* in = r.add_inputs();
    in->set_name("x");
    in->set_datatype("FP32");
    in->add_shape(static_cast<int64_t>(values.size() / 2));
    in->add_shape(2);
    if (raw) {
      r.add_raw_input_contents(
          std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
    } else {
      for (float v : values) in->mutable_contents()->add_fp32_contents(v);
    }
    return r;
  }

  ::grpc::Status Infer(const ModelInferRequest& request, ModelInferResponse* response) {
    ::grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, request, response);
  }

  fs::path store_;
  metrics::Registry registry_;
  serving::RequestMetrics request_metrics_{&registry_};
  backend::FakeBackend backend_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<repository::ModelRepository> repo_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
  std::atomic<bool> ready_{true};
  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false;  // guarded by mu_
  int held_ = 0;          // guarded by mu_
};

TEST_F(GrpcServerTest, HealthAndServerMetadata) {
  ::grpc::ClientContext c1, c2, c3, c4;
  ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&c1, {}, &live).ok());
  EXPECT_TRUE(live.live());
  ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  ready_ = false;
  ASSERT_TRUE(stub_->ServerReady(&c3, {}, &ready).ok());
  EXPECT_FALSE(ready.ready());
  ServerMetadataResponse meta;
  ASSERT_TRUE(stub_->ServerMetadata(&c4, {}, &meta).ok());
  EXPECT_EQ(meta.name(), "inferd");
  EXPECT_EQ(meta.extensions_size(), 2);
}

TEST_F(GrpcServerTest, ModelReadyAndMetadata) {
  ::grpc::ClientContext c1, c2, c3, c4;
  ModelReadyRequest req;
  req.set_name("echo");
  ModelReadyResponse ready;
  ASSERT_TRUE(stub_->ModelReady(&c1, req, &ready).ok());
  EXPECT_TRUE(ready.ready());
  req.set_name("nope");
  ::grpc::Status unknown = stub_->ModelReady(&c2, req, &ready);
  EXPECT_EQ(unknown.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(unknown.error_message().find("unknown model 'nope'"), std::string::npos);
  ModelMetadataRequest mreq;
  mreq.set_name("echo");
  ModelMetadataResponse meta;
  ASSERT_TRUE(stub_->ModelMetadata(&c3, mreq, &meta).ok());
  EXPECT_EQ(meta.platform(), "pytorch_torchscript");
  ASSERT_EQ(meta.inputs_size(), 1);
  EXPECT_EQ(meta.inputs(0).datatype(), "FP32");
  EXPECT_EQ(meta.inputs(0).shape_size(), 2);  // [-1, 2]
  mreq.set_version("9");
  EXPECT_EQ(stub_->ModelMetadata(&c4, mreq, &meta).error_code(), ::grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, InferRawAnswersRawAndTypedAnswersTyped) {
  ModelInferResponse raw;
  ModelInferRequest req = EchoRequest({1, 2, 3, 4}, true);
  req.set_id("r1");
  ASSERT_TRUE(Infer(req, &raw).ok());
  EXPECT_EQ(raw.id(), "r1");
  EXPECT_EQ(raw.model_version(), "1");
  ASSERT_EQ(raw.outputs_size(), 1);
  EXPECT_EQ(raw.outputs(0).name(), "y");
  ASSERT_EQ(raw.raw_output_contents_size(), 1);
  float y[4];
  ASSERT_EQ(raw.raw_output_contents(0).size(), sizeof(y));
  std::memcpy(y, raw.raw_output_contents(0).data(), sizeof(y));
  EXPECT_EQ(y[3], 4.0f);

  ModelInferResponse typed;
  ASSERT_TRUE(Infer(EchoRequest({5, 6}, false), &typed).ok());
  EXPECT_EQ(typed.raw_output_contents_size(), 0);
  ASSERT_EQ(typed.outputs(0).contents().fp32_contents_size(), 2);
  EXPECT_EQ(typed.outputs(0).contents().fp32_contents(1), 6.0f);
}

TEST_F(GrpcServerTest, ErrorsMapToGrpcCodesWithTheRestMessages) {
  ModelInferResponse r;
  ModelInferRequest unknown = EchoRequest({1, 2}, true);
  unknown.set_model_name("nope");
  ::grpc::Status st = Infer(unknown, &r);
  EXPECT_EQ(st.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "unknown model 'nope' (known models: broken, echo)");

  ModelInferRequest bad_shape = EchoRequest({1, 2, 3}, false);
  bad_shape.mutable_inputs(0)->set_shape(0, 1);
  bad_shape.mutable_inputs(0)->set_shape(1, 3);
  st = Infer(bad_shape, &r);
  EXPECT_EQ(st.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("input 'x'"), std::string::npos) << st.error_message();

  ModelInferRequest bad_version = EchoRequest({1, 2}, true);
  bad_version.set_model_version("x");
  EXPECT_EQ(Infer(bad_version, &r).error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);

  ModelInferRequest broken = EchoRequest({1, 2}, true);
  broken.set_model_name("broken");
  EXPECT_EQ(Infer(broken, &r).error_code(), ::grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcServerTest, DrainingAnswersUnavailable) {
  scheduler_->StopAccepting();
  ModelInferResponse r;
  ::grpc::Status st = Infer(EchoRequest({1, 2}, true), &r);
  EXPECT_EQ(st.error_code(), ::grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(st.error_message().find("draining"), std::string::npos) << st.error_message();
}

TEST_F(GrpcServerTest, MetricsCountGrpcLikeHttp) {
  ModelInferResponse r;
  ASSERT_TRUE(Infer(EchoRequest({1, 2}, true), &r).ok());
  ModelInferRequest bad = EchoRequest({1, 2}, true);
  bad.set_model_name("random123");
  EXPECT_FALSE(Infer(bad, &r).ok());
  std::string text = registry_.RenderPrometheus();
  EXPECT_NE(
      text.find(R"(inferd_requests_total{code="OK",model="echo",protocol="grpc",version="1"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(inferd_requests_total{code="NOT_FOUND",model="",protocol="grpc"} 1)"),
            std::string::npos);
  EXPECT_EQ(text.find("random123"), std::string::npos);
  EXPECT_NE(text.find(R"(inferd_compute_duration_seconds_count{model="echo"} 1)"),
            std::string::npos);
}

TEST_F(GrpcServerTest, RepositoryIndexUnloadAndLoad) {
  ::grpc::ClientContext c1, c2, c3, c4;
  RepositoryIndexResponse index;
  ASSERT_TRUE(stub_->RepositoryIndex(&c1, {}, &index).ok());
  ASSERT_EQ(index.models_size(), 2);
  EXPECT_EQ(index.models(0).name(), "broken");
  EXPECT_EQ(index.models(1).state(), "READY");
  RepositoryModelUnloadRequest unload;
  unload.set_model_name("echo");
  RepositoryModelUnloadResponse unloaded;
  ASSERT_TRUE(stub_->RepositoryModelUnload(&c2, unload, &unloaded).ok());
  ModelInferResponse r;
  EXPECT_EQ(Infer(EchoRequest({1, 2}, true), &r).error_code(), ::grpc::StatusCode::UNAVAILABLE);
  RepositoryModelLoadRequest load;
  load.set_model_name("echo");
  RepositoryModelLoadResponse loaded;
  ASSERT_TRUE(stub_->RepositoryModelLoad(&c3, load, &loaded).ok());
  EXPECT_TRUE(Infer(EchoRequest({1, 2}, true), &r).ok());
  load.set_model_name("broken");
  EXPECT_EQ(stub_->RepositoryModelLoad(&c4, load, &loaded).error_code(),
            ::grpc::StatusCode::FAILED_PRECONDITION);
}

// A request still computing when the server stops: Stop returns after its
// grace period, the client gets an error, and the late completion (after the
// gate opens) is dropped without touching the stopped server.
TEST_F(GrpcServerTest, StopWithARequestInFlight) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    holding_ = true;
  }
  ::grpc::ClientContext ctx;
  ModelInferResponse r;
  ::grpc::CompletionQueue cq;
  auto rpc = stub_->AsyncModelInfer(&ctx, EchoRequest({1, 2}, true), &cq);
  ::grpc::Status st;
  rpc->Finish(&r, &st, reinterpret_cast<void*>(1));
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return held_ == 1; });
  }
  server_->Stop();  // returns after stop_grace (200 ms): the call is cancelled
  void* tag = nullptr;
  bool ok = false;
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_FALSE(st.ok());
  {
    std::lock_guard<std::mutex> lock(mu_);
    holding_ = false;
  }
  cv_.notify_all();
  // The late completion runs now, and is dropped: the server is stopped.
  EXPECT_TRUE(scheduler_->WaitIdle(Clock::Real()->Now() + std::chrono::seconds(10)));
  server_.reset();
}

}  // namespace
}  // namespace inferd::grpc
