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

template <typename Stream>
Stream MakeStream(net::ip::tcp::socket socket, net::ssl::context* tls) {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    return Stream(std::move(socket), *tls);
  } else {
    (void)tls;
    return Stream(std::move(socket));
  }
}

}  // namespace

template <typename Stream>
BasicConnection<Stream>::BasicConnection(net::ip::tcp::socket socket,
                                         std::shared_ptr<net::io_context> io, const Router* router,
                                         ConnectionOptions options,
                                         std::shared_ptr<net::ssl::context> tls)
    : io_(std::move(io)),
      tls_(std::move(tls)),
      stream_(MakeStream<Stream>(std::move(socket), tls_.get())),
      router_(router),
      options_(std::move(options)) {
  if (options_.live) options_.live->fetch_add(1, std::memory_order_relaxed);
}

template <typename Stream>
BasicConnection<Stream>::~BasicConnection() {
  if (cancelled_) cancelled_->store(true);
  if (options_.live) options_.live->fetch_sub(1, std::memory_order_relaxed);
}

template <typename Stream>
void BasicConnection<Stream>::Start() {
  net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
    if constexpr (kTls) {
      self->ExpiresAfter(self->options_.idle_timeout);
      self->stream_.async_handshake(net::ssl::stream_base::server,
                                    [self](beast::error_code ec) {
                                      if (ec) return self->Close();
                                      self->Begin();
                                    });
    } else {
      self->Begin();
    }
  });
}

template <typename Stream>
void BasicConnection<Stream>::Begin() {
  if (!options_.refusal) return ReadHeader();
  keep_alive_ = false;
  linger_ = true;  // let the client finish sending, so it reads the answer
  Send(std::move(*options_.refusal));
}

template <typename Stream>
void BasicConnection<Stream>::Shutdown() {
  net::post(stream_.get_executor(), [self = this->shared_from_this()] {
    self->stopping_ = true;
    if (self->idle_) self->Close();
  });
}

template <typename Stream>
void BasicConnection<Stream>::ReadHeader() {
  if (stopping_) return Close();
  idle_ = true;
  // An idle connection keeps no body's read room (OnHeader), unless the
  // client already sent more (pipelined).
  if (buffer_.size() == 0 && buffer_.capacity() > kIdleReadRoom) buffer_.shrink_to_fit();
  parser_.emplace();
  parser_->body_limit(options_.body_limit);
  ExpiresAfter(options_.idle_timeout);
  bhttp::async_read_header(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

template <typename Stream>
void BasicConnection<Stream>::OnHeader(beast::error_code ec) {
  idle_ = false;
  if (ec) return ReadError(ec);
  auto& req = parser_->get();
  version_ = req.version();
  auto length = parser_->content_length();
  if (options_.guard) {
    const auto method = req.method_string();
    const auto target = req.target();
    const auto authorization = req[bhttp::field::authorization];
    if (auto refusal = options_.guard->Check(
            std::string_view(method.data(), method.size()),
            std::string_view(target.data(), target.size()),
            std::string_view(authorization.data(), authorization.size()))) {
      // A request with a body still to come closes after the answer (its
      // body is never read); one without keeps its connection.
      if (!parser_->is_done()) {
        keep_alive_ = false;
        linger_ = true;
      } else {
        keep_alive_ = req.keep_alive();
      }
      return Send(std::move(*refusal));
    }
  }
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
    ExpiresAfter(options_.idle_timeout);
    bhttp::async_write(stream_, *cont,
                       [self = this->shared_from_this(), cont](beast::error_code ec, size_t) {
                         if (ec) return self->Close();
                         self->ReadBody();
                       });
    return;
  }
  ReadBody();
}

template <typename Stream>
void BasicConnection<Stream>::ReadBody() {
  ExpiresAfter(options_.idle_timeout);
  bhttp::async_read(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

template <typename Stream>
void BasicConnection<Stream>::OnBody(beast::error_code ec) {
  if (ec) return ReadError(ec);
  Dispatch();
}

template <typename Stream>
void BasicConnection<Stream>::ReadError(beast::error_code ec) {
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

template <typename Stream>
void BasicConnection<Stream>::Dispatch() {
  auto message = parser_->release();
  parser_.reset();
  keep_alive_ = message.keep_alive();
  version_ = message.version();
  HttpRequest req = ToHttpRequest(std::move(message), Clock::Real()->Now());
  cancelled_ = req.cancelled;
  busy_ = true;
  ++serving_;
  WatchForClose();
  auto self = this->shared_from_this();
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

template <typename Stream>
void BasicConnection<Stream>::WatchForClose() {
  // Readable while serving = the client closed, reset, or pipelined its next
  // request; readiness can also be stale (an edge already consumed by the
  // request's own read), so a peek decides and a stale wake-up re-arms.
  Socket().async_wait(
      net::ip::tcp::socket::wait_read,
      [self = this->shared_from_this(), serving = serving_](beast::error_code ec) {
        if (ec || !self->busy_ || serving != self->serving_) return;
        char byte;
        ssize_t n =
            ::recv(self->Socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;  // a pipelined request: not a close
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          return self->WatchForClose();
        }
        if (self->cancelled_) self->cancelled_->store(true);  // EOF or error
      });
}

template <typename Stream>
void BasicConnection<Stream>::Send(HttpResponse response) {
  if (busy_) {
    busy_ = false;
    beast::error_code ignored;
    Socket().cancel(ignored);  // ends the close watch
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
  ExpiresAfter(options_.idle_timeout);
  bhttp::async_write(stream_, *res, [self = this->shared_from_this()](beast::error_code ec, size_t) {
    self->OnWrite(ec);
  });
}

template <typename Stream>
void BasicConnection<Stream>::OnWrite(beast::error_code ec) {
  response_.reset();
  if (!ec && linger_) return Linger();
  if (ec || !keep_alive_) return Close();
  ReadHeader();
}

template <typename Stream>
void BasicConnection<Stream>::Linger() {
  beast::error_code ignored;
  Socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  if (linger_) {
    linger_ = false;
    ExpiresAfter(std::chrono::seconds(5));  // one deadline for the whole drain
  }
  auto sink = std::make_shared<std::array<char, 64 * 1024>>();
  stream_.async_read_some(net::buffer(*sink),
                          [self = this->shared_from_this(), sink](beast::error_code ec, size_t) {
                            if (ec) return self->Close();
                            self->Linger();
                          });
}

template <typename Stream>
void BasicConnection<Stream>::Abort() {
  if (cancelled_) cancelled_->store(true);
  beast::error_code ignored;
  Socket().close(ignored);
}

template <typename Stream>
void BasicConnection<Stream>::Close() {
  if (cancelled_) cancelled_->store(true);
  beast::error_code ignored;
  Socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  Socket().close(ignored);
}

template class BasicConnection<PlainStream>;
template class BasicConnection<TlsStream>;

}  // namespace inferd::http
