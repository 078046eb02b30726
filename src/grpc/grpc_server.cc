#include "grpc/grpc_server.h"

#include <absl/synchronization/mutex.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <thread>
#include <vector>

#include "grpc/call_access.h"
#include "grpc/handlers.h"

namespace inferd::grpc {

using namespace inference;  // NOLINT: the generated message types

// Everything a call may touch, shared by the calls (see UnaryCall::Site): it
// outlives GrpcServer when a scheduler completion still holds a call.
class GrpcServer::Impl : public std::enable_shared_from_this<GrpcServer::Impl> {
 public:
  Impl(const Options& options, serving::Services services)
      : options_(options), services_(std::move(services)) {}

  ~Impl() { Stop(); }

  Status Bind() {
    std::string host = options_.bind_address;
    if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6
    std::string address = host + ":" + std::to_string(options_.port);
    ::grpc::ServerBuilder builder;
    int bound = 0;
    builder.AddListeningPort(address, Credentials(), &bound);
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
    builder.SetMaxSendMessageSize(-1);
    // gRPC's server deadline filter arms a timer per call that has a deadline,
    // to cancel it then; ~4k instructions per call (callgrind) and a timer
    // entry, for nothing here: the call's deadline is the request's deadline
    // in the scheduler and the repository (answered DEADLINE_EXCEEDED), and the
    // client gives up at it on its own (its RST_STREAM cancels the call).
    builder.AddChannelArgument(GRPC_ARG_ENABLE_DEADLINE_CHECKS, 0);
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      auto q = std::make_unique<internal::QueueThread>();
      q->cq = builder.AddCompletionQueue();
      queues_.push_back(std::move(q));
    }
    server_ = builder.BuildAndStart();
    if (!server_ || bound == 0) {
      server_.reset();
      return Unavailable("cannot listen on the grpc port " + address);
    }
    port_ = static_cast<uint16_t>(bound);
    return Status::Ok();
  }

  uint16_t port() const { return port_; }

  void Start() {
    if (!threads_.empty()) return;
    for (auto& q : queues_) {
      threads_.emplace_back([self = shared_from_this(), q = q.get()] {
        pthread_setname_np(pthread_self(), "inferd-grpc-cq");
        self->ListenAll(q);
        internal::DrainQueue(*q);
      });
    }
  }

  void Stop() { Stop(options_.stop_grace); }

  void Stop(std::chrono::milliseconds grace) {
    if (stopped_) return;
    stopped_ = true;
    // Refuses new calls; waits for those in flight to be answered (their
    // answers still reach the queues), then cancels what is left.
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + grace);
    gate_.Close();  // nothing new starts on the queues from here
    for (auto& q : queues_) q->cq->Shutdown();
    if (threads_.empty()) {
      for (auto& q : queues_) internal::DrainQueue(*q);  // never started: drain here
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  template <typename Request, typename Response>
  using Method = typename Call<Request, Response>::RequestMethod;

  std::shared_ptr<::grpc::ServerCredentials> Credentials() const {
    if (options_.tls_cert.empty()) return ::grpc::InsecureServerCredentials();
    namespace x = ::grpc::experimental;
    // Re-reads the pair every second and serves new handshakes with it.
    auto files = std::make_shared<x::FileWatcherCertificateProvider>(
        options_.tls_key, options_.tls_cert, /*refresh_interval_sec=*/1);
    x::TlsServerCredentialsOptions tls(files);
    tls.watch_identity_key_cert_pairs();
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    return x::TlsServerCredentials(tls);
  }

  // `kind`: the key the method needs (nullopt: open, the probes).
  template <typename Request, typename Response>
  void Listen(internal::QueueThread* q, Method<Request, Response> method,
              void (*handle)(const serving::Services&, const CallPtr<Request, Response>&),
              std::optional<auth::Kind> kind) {
    using C = Call<Request, Response>;
    auto site = std::make_shared<typename C::Site>();
    site->service = &service_;
    site->method = method;
    site->queue = q;
    site->gate = &gate_;
    const auth::Authorizer* keys = kind ? options_.keys : nullptr;
    site->handler = [services = &services_, handle, keys,
                     kind](const CallPtr<Request, Response>& call) {
      if (keys) {
        ::grpc::Status refused = CheckCallAccess(*keys, *kind, call->context());
        if (!refused.ok()) return call->Respond([&](Response*) { return refused; });
      }
      handle(*services, call);
    };
    site->owner = shared_from_this();
    C::Listen(std::move(site));
  }

  // Called on the queue's own thread before it drains the queue.
  void ListenAll(internal::QueueThread* q) {
    Listen<ServerLiveRequest, ServerLiveResponse>(q, &AsyncService::RequestServerLive,
                                                  &HandleServerLive, std::nullopt);
    Listen<ServerReadyRequest, ServerReadyResponse>(q, &AsyncService::RequestServerReady,
                                                    &HandleServerReady, std::nullopt);
    Listen<ModelReadyRequest, ModelReadyResponse>(q, &AsyncService::RequestModelReady,
                                                  &HandleModelReady, auth::Kind::kInference);
    Listen<ServerMetadataRequest, ServerMetadataResponse>(q, &AsyncService::RequestServerMetadata,
                                                          &HandleServerMetadata, auth::Kind::kInference);
    Listen<ModelMetadataRequest, ModelMetadataResponse>(q, &AsyncService::RequestModelMetadata,
                                                        &HandleModelMetadata, auth::Kind::kInference);
    // Several ModelInfer calls are asked for at once, so that a burst of
    // arrivals need not wait for each to be asked for in turn.
    for (int i = 0; i < kInferListeners; ++i) {
      Listen<ModelInferRequest, ModelInferResponse>(q, &AsyncService::RequestModelInfer,
                                                    &HandleModelInfer, auth::Kind::kInference);
    }
    Listen<RepositoryIndexRequest, RepositoryIndexResponse>(
        q, &AsyncService::RequestRepositoryIndex, &HandleRepositoryIndex, auth::Kind::kManagement);
    Listen<RepositoryModelLoadRequest, RepositoryModelLoadResponse>(
        q, &AsyncService::RequestRepositoryModelLoad, &HandleRepositoryModelLoad, auth::Kind::kManagement);
    Listen<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>(
        q, &AsyncService::RequestRepositoryModelUnload, &HandleRepositoryModelUnload, auth::Kind::kManagement);
  }

  static constexpr int kInferListeners = 8;

  Options options_;
  serving::Services services_;
  AsyncService service_;
  std::vector<std::unique_ptr<internal::QueueThread>> queues_;
  std::unique_ptr<::grpc::Server> server_;
  internal::ServerGate gate_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const Options& options,
                                                         serving::Services services) {
  if (!services.repository) return InvalidArgument("grpc server needs a repository");
  if (options.threads < 1) return InvalidArgument("grpc threads must be >= 1");
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock
  // detection on: every lock gRPC takes then updates a global lock graph
  // (GraphCycles in the server's profile). It is a debugging aid; turn it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto impl = std::make_shared<Impl>(options, std::move(services));
  RETURN_IF_ERROR(impl->Bind());
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

GrpcServer::GrpcServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcServer::~GrpcServer() { impl_->Stop(); }
uint16_t GrpcServer::port() const { return impl_->port(); }
void GrpcServer::Start() { impl_->Start(); }
void GrpcServer::Stop() { impl_->Stop(); }
void GrpcServer::Stop(std::chrono::milliseconds grace) { impl_->Stop(grace); }

}  // namespace inferd::grpc
