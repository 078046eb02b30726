// A blocking HTTP/1.1 client over one keep-alive connection, for tests.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string>
#include <utility>
#include <vector>

namespace inferd::http::testing {

struct ClientResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  boost::beast::http::fields headers;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : std::string(it->value());
  }
};

class TestClient {
 public:
  explicit TestClient(uint16_t port) : socket_(io_) {
    boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), port);
    socket_.connect(ep);
  }

  ClientResponse Send(const std::string& method, const std::string& target,
                      const std::string& body = "",
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    namespace bhttp = boost::beast::http;
    bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), target, 11);
    req.set(bhttp::field::host, "127.0.0.1");
    for (auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    bhttp::write(socket_, req);
    return Read();
  }

  ClientResponse Read() {
    namespace bhttp = boost::beast::http;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1ull << 30);
    bhttp::read(socket_, buffer_, parser);
    auto res = parser.release();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = res.body();
    out.content_type = std::string(res[bhttp::field::content_type]);
    for (const auto& f : res) out.headers.set(f.name_string(), f.value());
    return out;
  }

  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace inferd::http::testing
