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
// Lifetime: owned by shared_ptrs held by its pending operations and Responders.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <optional>

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
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `io` keeps the io_context alive for Responders that fire after the server stopped.
  Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::io_context> io,
             const Router* router, ConnectionOptions options);
  ~Connection();
  void Start();
  // Asks the connection to finish: an idle one (waiting for a request) closes
  // now, a busy one closes after writing its response. Any thread.
  void Shutdown();
  // Closes the socket from outside; only while no thread runs the io_context.
  void Abort();

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

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

  std::shared_ptr<boost::asio::io_context> io_;  // first: destroyed last
  boost::beast::tcp_stream stream_;
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

}  // namespace inferd::http
