#include "http/connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>

#include "http/json_body.h"
#include "http/request_head.h"
#include "common/json_writer.h"
#include "http/model_metadata.h"
#include "http/status_map.h"

namespace inferd::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

// Read room for a body (Beast reads at most 64 KiB at a time), and what an
// idle connection keeps at most.
constexpr uint64_t kBodyReadRoom = 64 * 1024;
constexpr size_t kIdleReadRoom = 8 * 1024;

}  // namespace

Connection::Connection(net::ip::tcp::socket socket, std::shared_ptr<net::io_context> io,
                       const Router* router, ConnectionOptions options)
    : io_(std::move(io)), stream_(std::move(socket)), router_(router), options_(std::move(options)) {
  if (options_.live) options_.live->fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() {
  if (cancelled_) cancelled_->store(true);
  if (options_.live) options_.live->fetch_sub(1, std::memory_order_relaxed);
}

void Connection::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    if (!self->options_.refusal) return self->ReadHeader();
    self->keep_alive_ = false;
    self->linger_ = true;  // let the client finish sending, so it reads the answer
    self->Send(std::move(*self->options_.refusal));
  });
}

void Connection::Shutdown() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->stopping_ = true;
    if (self->idle_) self->Close();
  });
}

void Connection::ReadHeader() {
  if (stopping_) return Close();
  idle_ = true;
  // An idle connection keeps no body's read room (OnHeader), unless the
  // client already sent more (pipelined).
  if (buffer_.size() == 0 && buffer_.capacity() > kIdleReadRoom) buffer_.shrink_to_fit();
  parser_.emplace();
  parser_->body_limit(options_.body_limit);
  stream_.expires_after(options_.idle_timeout);
  bhttp::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void Connection::OnHeader(beast::error_code ec) {
  idle_ = false;
  if (ec) return ReadError(ec);
  auto& req = parser_->get();
  version_ = req.version();
  auto length = parser_->content_length();
  if (length && *length > options_.body_limit) {
    keep_alive_ = false;
    linger_ = true;
    return Send(ErrorResponse(PayloadTooLarge("request body of " + std::to_string(*length) +
                                              " bytes is over the limit of " +
                                              std::to_string(options_.body_limit) + " bytes")));
  }
  // Room for simdjson's padding, so that parsing needs no copy of the body.
  if (length) req.body().reserve(*length + simdjson::SIMDJSON_PADDING);
  // Beast reads a body in pieces of the buffer's free room (512 bytes to
  // 64 KiB, beast::read_size): a 35 KB JPEG read into what was left after
  // the header took 22 recvmsg calls. Room for the body makes it one or two.
  if (length && *length > 0) {
    buffer_.reserve(buffer_.size() + std::min<uint64_t>(*length, kBodyReadRoom));
  }
  if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
    auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_,
                                                                     req.version());
    stream_.expires_after(options_.idle_timeout);
    bhttp::async_write(stream_, *cont,
                       [self = shared_from_this(), cont](beast::error_code ec, size_t) {
                         if (ec) return self->Close();
                         self->ReadBody();
                       });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  stream_.expires_after(options_.idle_timeout);
  bhttp::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

void Connection::OnBody(beast::error_code ec) {
  if (ec) return ReadError(ec);
  Dispatch();
}

void Connection::ReadError(beast::error_code ec) {
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset) {
    return Close();
  }
  keep_alive_ = false;
  linger_ = true;
  if (ec == bhttp::error::body_limit) {
    return Send(ErrorResponse(PayloadTooLarge("request body is over the limit of " +
                                              std::to_string(options_.body_limit) + " bytes")));
  }
  if (ec == bhttp::error::header_limit) {
    return Send(JsonResponse(431, ErrorJson("request header fields are too large")));
  }
  Send(ErrorResponse(InvalidArgument("malformed HTTP request: " + ec.message())));
}

void Connection::Dispatch() {
  auto message = parser_->release();
  parser_.reset();
  keep_alive_ = message.keep_alive();
  version_ = message.version();
  HttpRequest req = ToHttpRequest(std::move(message), Clock::Real()->Now());
  cancelled_ = req.cancelled;
  busy_ = true;
  ++serving_;
  WatchForClose();
  auto self = shared_from_this();
  auto answered = std::make_shared<std::atomic<bool>>(false);
  Responder respond = [self, answered](ResponseMaker make) {
    if (answered->exchange(true)) return;  // a buggy second answer is dropped
    net::post(self->stream_.get_executor(), [self, make = std::move(make)] {
      HttpResponse response;
      try {
        response = make();
      } catch (const std::exception& e) {
        response = ErrorResponse(Internal(std::string("writing the response failed: ") + e.what()));
      }
      self->Send(std::move(response));
    });
  };
  try {
    router_->Dispatch(req, respond);
  } catch (const std::exception& e) {
    // Dropped by the Responder if the handler had answered before throwing.
    Reply(respond,
          ErrorResponse(Internal(std::string("handling the request failed: ") + e.what())));
  }
}

void Connection::WatchForClose() {
  // Readable while serving = the client closed, reset, or pipelined its next
  // request; readiness can also be stale (an edge already consumed by the
  // request's own read), so a peek decides and a stale wake-up re-arms.
  stream_.socket().async_wait(
      net::ip::tcp::socket::wait_read,
      [self = shared_from_this(), serving = serving_](beast::error_code ec) {
        if (ec || !self->busy_ || serving != self->serving_) return;
        char byte;
        ssize_t n =
            ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;  // a pipelined request: not a close
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          return self->WatchForClose();
        }
        if (self->cancelled_) self->cancelled_->store(true);  // EOF or error
      });
}

void Connection::Send(HttpResponse response) {
  if (busy_) {
    busy_ = false;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // ends the close watch
  }
  auto res = std::make_shared<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(response.status), version_);
  res->set(bhttp::field::server, kServerName);
  res->set(bhttp::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) res->set(name, value);
  if (stopping_) keep_alive_ = false;
  res->keep_alive(keep_alive_);
  res->body() = std::move(response.body);
  res->prepare_payload();
  response_ = res;
  stream_.expires_after(options_.idle_timeout);
  bhttp::async_write(stream_, *res, [self = shared_from_this()](beast::error_code ec, size_t) {
    self->OnWrite(ec);
  });
}

void Connection::OnWrite(beast::error_code ec) {
  response_.reset();
  if (!ec && linger_) return Linger();
  if (ec || !keep_alive_) return Close();
  ReadHeader();
}

void Connection::Linger() {
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  if (linger_) {
    linger_ = false;
    stream_.expires_after(std::chrono::seconds(5));  // one deadline for the whole drain
  }
  auto sink = std::make_shared<std::array<char, 64 * 1024>>();
  stream_.async_read_some(net::buffer(*sink),
                          [self = shared_from_this(), sink](beast::error_code ec, size_t) {
                            if (ec) return self->Close();
                            self->Linger();
                          });
}

void Connection::Abort() {
  if (cancelled_) cancelled_->store(true);
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

void Connection::Close() {
  if (cancelled_) cancelled_->store(true);
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

}  // namespace inferd::http
