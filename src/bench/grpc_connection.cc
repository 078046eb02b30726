#include "bench/grpc_connection.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include <boost/asio/post.hpp>

#include "bench/grpc_request.h"
#include "bench/step_result.h"

namespace inferd::bench {

GrpcClient::GrpcClient(boost::asio::io_context& ioc, const std::string& target)
    : ioc_(ioc),
      channel_([&] {
        ::grpc::ChannelArguments args;
        args.SetMaxReceiveMessageSize(-1);
        args.SetMaxSendMessageSize(-1);
        return ::grpc::CreateCustomChannel(target, ::grpc::InsecureChannelCredentials(), args);
      }()),
      stub_(channel_) {
  thread_ = std::thread([this] {
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) static_cast<GrpcConnection*>(tag)->OnFinished();
  });
}

GrpcClient::~GrpcClient() {
  cq_.Shutdown();
  thread_.join();
}

void GrpcConnection::Send(const std::string* request, Done done) {
  done_ = std::move(done);
  ctx_ = std::make_unique<::grpc::ClientContext>();
  ctx_->set_deadline(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout_));
  // The bytes outlive the call (see Connection): no copy into the message.
  ::grpc::Slice slice(request->data(), request->size(), ::grpc::Slice::STATIC_SLICE);
  ::grpc::ByteBuffer message(&slice, 1);
  call_ = client_->stub().PrepareUnaryCall(ctx_.get(), kModelInferMethod, message, client_->cq());
  call_->StartCall();
  self_ = shared_from_this();
  call_->Finish(&response_, &status_, this);
}

void GrpcConnection::Close() {
  if (busy() && ctx_) ctx_->TryCancel();
}

void GrpcConnection::OnFinished() {
  boost::asio::post(client_->ioc(), [self = std::move(self_)] {
    Done done = std::move(self->done_);
    self->done_ = nullptr;
    done(SampleStatusFor(self->status_));
  });
}

int SampleStatusFor(const ::grpc::Status& status) {
  switch (status.error_code()) {
    case ::grpc::StatusCode::OK:
      return 200;
    case ::grpc::StatusCode::INVALID_ARGUMENT:
    case ::grpc::StatusCode::FAILED_PRECONDITION:
      return 400;
    case ::grpc::StatusCode::NOT_FOUND:
      return 404;
    case ::grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case ::grpc::StatusCode::UNAVAILABLE:
      return 503;
    case ::grpc::StatusCode::DEADLINE_EXCEEDED:
      return kTimeout;
    case ::grpc::StatusCode::CANCELLED:
      return kConnectionError;
    default:
      return 500;
  }
}

}  // namespace inferd::bench
