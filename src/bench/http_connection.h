// HttpConnection: one keep-alive HTTP/1.1 client connection of the load
// generator, driven by callbacks on one io_context thread.
//
// Send() writes a pre-serialized request and reads the whole response
// (response() shows it to the callback); the callback gets the HTTP status,
// or kConnectionError / kTimeout (step_result.h).
// The connection (re)connects lazily: after an error, a timeout or a
// `Connection: close` response it closes the socket, and the next Send opens a
// new one (its connect time then counts in that request's latency, as a real
// client would see it). Timeouts are enforced by the owner calling
// CloseIfExpired() now and then (one timer for all connections, instead of
// arming a timer per request: the generator must stay light).
//
// Thread-safety: none; every call and callback runs on the io_context's thread.
// Ownership: held by shared_ptr; pending operations keep it alive. The request
// bytes passed to Send must outlive the callback.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bench/connection.h"

namespace inferd::bench {

class HttpConnection : public Connection, public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::io_context& ioc,
                 boost::asio::ip::tcp::resolver::results_type endpoints,
                 std::chrono::nanoseconds timeout);

  // Sends `request` (a complete HTTP/1.1 request) and calls `done` once.
  // One request at a time per connection.
  void Send(const std::string* request, Done done) override;

  // Closes the socket; a pending Send completes with kConnectionError.
  void Close() override;

  bool busy() const override { return static_cast<bool>(done_); }

  // The response just read, for a caller that wants more than its status
  // (mirror/remote_candidate.h): valid inside Send's `done` when the status
  // is an HTTP status, until the next Send.
  const boost::beast::http::response<boost::beast::http::string_body>& response() const {
    return parser_->get();
  }

  // Closes the socket when the pending request started more than `timeout`
  // before `now`; the request then completes with kTimeout.
  void CloseIfExpired(std::chrono::steady_clock::time_point now) override;

 private:
  void Connect();
  void Write();
  void Read();
  void Fail(const boost::system::error_code& ec);
  void Finish(int status);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::ip::tcp::resolver::results_type endpoints_;
  std::chrono::nanoseconds timeout_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
  const std::string* request_ = nullptr;
  Done done_;
  std::chrono::steady_clock::time_point started_;
  bool connected_ = false;
  bool timed_out_ = false;
};

}  // namespace inferd::bench
