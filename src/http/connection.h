// Connection: one client's HTTP/1.1 keep-alive session (Boost.Beast).
//
// Reads one request at a time (header first: answers Expect: 100-continue and
// refuses a declared body past the limit before reading it), dispatches it to
// the router, and writes the response when the handler's Responder fires.
// Every step runs on the connection's strand; Responders may be called from
// any thread and only post to it. While a request is being served the socket
// is watched for the client closing, which flips the request's cancelled flag
// (best effort: a pipelined next request is not a close).
// Slow clients: each read and write must finish within idle_timeout.
// A handler that throws answers 500; the connection and the server go on.
// A connection made with options.refusal only writes that answer and closes.
// With options.guard, a request without the key its route needs is answered
// 401/403 from its header (access_guard.h); its body is then not read.
// TLS (TlsConnection): the handshake comes first, within idle_timeout; the
// close watch sees a client's reset or FIN, not a TLS close_notify alone.
// Lifetime: owned by shared_ptrs held by its pending operations and Responders.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>

#include "http/access_guard.h"
#include "http/http_message.h"
#include "http/router.h"

namespace inferd::http {

struct ConnectionOptions {
  size_t body_limit = 64ull << 20;
  std::chrono::seconds idle_timeout{60};
  // Counts the connections alive (incremented by the constructor, decremented
  // by the destructor); may be null.
  std::shared_ptr<std::atomic<int>> live;
  // Set for a connection over the server's limit: Start answers this at once
  // (without reading a request), then closes.
  std::optional<HttpResponse> refusal;
  // Checks each request's key (--auth-keys); null = no keys asked for.
  const AccessGuard* guard = nullptr;
};

// What the server keeps of each connection, whatever its stream.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  virtual void Start() = 0;
  // Asks the connection to finish: an idle one (waiting for a request) closes
  // now, a busy one closes after writing its response. Any thread.
  virtual void Shutdown() = 0;
  // Closes the socket from outside; only while no thread runs the io_context.
  virtual void Abort() = 0;
};

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

template <typename Stream>
class BasicConnection : public ConnectionBase,
                        public std::enable_shared_from_this<BasicConnection<Stream>> {
 public:
  // `io` keeps the io_context alive for Responders that fire after the server
  // stopped. `tls`: the TLS context (TlsStream only; held for the connection's life).
  BasicConnection(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::io_context> io,
                  const Router* router, ConnectionOptions options,
                  std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~BasicConnection() override;
  void Start() override;
  void Shutdown() override;
  void Abort() override;

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void Begin();
  void ReadHeader();
  void OnHeader(boost::beast::error_code ec);
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  void Dispatch();
  void WatchForClose();
  void Send(HttpResponse response);
  void OnWrite(boost::beast::error_code ec);
  void ReadError(boost::beast::error_code ec);
  void Close();
  // After answering a request whose body was not read: stop sending, read and
  // drop what the client still sends (up to a few seconds), then close, so
  // that the client reads the answer instead of a connection reset.
  void Linger();

  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  boost::asio::ip::tcp::socket& Socket() { return boost::beast::get_lowest_layer(stream_).socket(); }
  void ExpiresAfter(std::chrono::steady_clock::duration d) {
    boost::beast::get_lowest_layer(stream_).expires_after(d);
  }

  std::shared_ptr<boost::asio::io_context> io_;  // first: destroyed last
  std::shared_ptr<boost::asio::ssl::context> tls_;  // before stream_: it refers to it
  Stream stream_;
  const Router* router_;
  ConnectionOptions options_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::shared_ptr<boost::beast::http::response<boost::beast::http::string_body>> response_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool keep_alive_ = false;
  unsigned version_ = 11;  // of the request being answered: 10 or 11
  bool busy_ = false;      // a request is being served (the close watch is armed)
  uint64_t serving_ = 0;   // counts requests, so a stale close watch cannot cancel the next one
  bool linger_ = false;    // close with Linger() after the response
  bool idle_ = false;      // waiting for the next request's header
  bool stopping_ = false;  // Shutdown() was called: no further requests
};

extern template class BasicConnection<PlainStream>;
extern template class BasicConnection<TlsStream>;
using Connection = BasicConnection<PlainStream>;
using TlsConnection = BasicConnection<TlsStream>;

}  // namespace inferd::http
