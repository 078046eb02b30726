#include "bench/http_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>

#include "bench/step_result.h"

namespace inferd::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// Responses are read whole and dropped; this only bounds a runaway server.
constexpr std::uint64_t kMaxResponseBytes = 256ull << 20;

HttpConnection::HttpConnection(asio::io_context& ioc,
                               asio::ip::tcp::resolver::results_type endpoints,
                               std::chrono::nanoseconds timeout)
    : socket_(ioc), endpoints_(std::move(endpoints)), timeout_(timeout) {}

void HttpConnection::Send(const std::string* request, Done done) {
  request_ = request;
  done_ = std::move(done);
  started_ = std::chrono::steady_clock::now();
  timed_out_ = false;
  if (connected_) {
    Write();
  } else {
    Connect();
  }
}

void HttpConnection::Close() {
  beast::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  connected_ = false;
}

void HttpConnection::CloseIfExpired(std::chrono::steady_clock::time_point now) {
  if (busy() && now - started_ > timeout_) {
    timed_out_ = true;
    Close();
  }
}

void HttpConnection::Connect() {
  asio::async_connect(
      socket_, endpoints_,
      [self = shared_from_this()](const beast::error_code& ec, const asio::ip::tcp::endpoint&) {
        if (ec) return self->Fail(ec);
        self->connected_ = true;
        beast::error_code ignored;
        self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        self->Write();
      });
}

void HttpConnection::Write() {
  asio::async_write(socket_, asio::buffer(*request_),
                    [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                      if (ec) return self->Fail(ec);
                      self->Read();
                    });
}

void HttpConnection::Read() {
  parser_.emplace();
  parser_->body_limit(kMaxResponseBytes);
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                     if (ec) return self->Fail(ec);
                     const int status = static_cast<int>(self->parser_->get().result_int());
                     if (!self->parser_->keep_alive()) self->Close();
                     self->Finish(status);
                   });
}

void HttpConnection::Fail(const beast::error_code&) {
  Close();
  buffer_.clear();
  Finish(timed_out_ ? kTimeout : kConnectionError);
}

void HttpConnection::Finish(int status) {
  Done done = std::move(done_);
  done_ = nullptr;
  request_ = nullptr;
  if (done) done(status);
}

}  // namespace inferd::bench
