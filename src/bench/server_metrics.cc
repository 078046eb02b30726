#include "bench/server_metrics.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>

namespace inferd::bench {

namespace {

// The value of label `name` in a `{a="x",b="y"}` label set; empty if absent.
std::string_view LabelValue(std::string_view labels, std::string_view name) {
  const std::string key = std::string(name) + "=\"";
  std::size_t pos = 0;
  while ((pos = labels.find(key, pos)) != std::string_view::npos) {
    if (pos == 0 || labels[pos - 1] == '{' || labels[pos - 1] == ',') {
      const std::size_t start = pos + key.size();
      const std::size_t end = labels.find('"', start);
      if (end == std::string_view::npos) return {};
      return labels.substr(start, end - start);
    }
    pos += key.size();
  }
  return {};
}

bool IsModel(std::string_view value, const std::string& model) {
  return value == model || (value.size() > model.size() && value.substr(0, model.size()) == model &&
                            value[model.size()] == ':');
}

double Mean(double sum_delta, double count_delta) {
  return count_delta > 0 ? sum_delta / count_delta * 1e6 : 0;
}

}  // namespace

ServerCounters ParseServerCounters(std::string_view text, const std::string& model) {
  ServerCounters c;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '#') continue;
    const std::size_t brace = line.find('{');
    const std::size_t close = line.find('}');
    if (brace == std::string_view::npos || close == std::string_view::npos || close < brace) {
      continue;
    }
    const std::string_view name = line.substr(0, brace);
    if (name == "inferd_process_page_faults_total") {
      const std::string_view kind = LabelValue(line.substr(brace, close - brace + 1), "kind");
      const double value = std::strtod(std::string(line.substr(close + 1)).c_str(), nullptr);
      if (kind == "minor") c.minor_faults = value;
      if (kind == "major") c.major_faults = value;
      continue;
    }
    if (!IsModel(LabelValue(line.substr(brace, close - brace + 1), "model"), model)) continue;
    // strtod on a copy: the value is followed by an optional timestamp.
    const double value = std::strtod(std::string(line.substr(close + 1)).c_str(), nullptr);
    if (name == "inferd_requests_total")
      c.requests += value;
    else if (name == "inferd_request_duration_seconds_sum")
      c.request_sum_s += value;
    else if (name == "inferd_request_duration_seconds_count")
      c.request_count += value;
    else if (name == "inferd_queue_duration_seconds_sum")
      c.queue_sum_s += value;
    else if (name == "inferd_queue_duration_seconds_count")
      c.queue_count += value;
    else if (name == "inferd_compute_duration_seconds_sum")
      c.compute_sum_s += value;
    else if (name == "inferd_compute_duration_seconds_count")
      c.compute_count += value;
  }
  return c;
}

ServerStepTimes Difference(const ServerCounters& b, const ServerCounters& a) {
  ServerStepTimes t;
  t.requests = a.requests - b.requests;
  t.request_us = Mean(a.request_sum_s - b.request_sum_s, a.request_count - b.request_count);
  t.queue_us = Mean(a.queue_sum_s - b.queue_sum_s, a.queue_count - b.queue_count);
  t.compute_us = Mean(a.compute_sum_s - b.compute_sum_s, a.compute_count - b.compute_count);
  if (t.requests > 0) {
    t.minor_faults_per_request = (a.minor_faults - b.minor_faults) / t.requests;
    t.major_faults_per_request = (a.major_faults - b.major_faults) / t.requests;
  }
  return t;
}

StatusOr<std::string> FetchMetricsText(const std::string& url) {
  ASSIGN_OR_RETURN(ParsedUrl parsed, ParseUrl(url));
  namespace asio = boost::asio;
  namespace http = boost::beast::http;
  try {
    asio::io_context ioc;
    asio::ip::tcp::resolver resolver(ioc);
    asio::ip::tcp::socket socket(ioc);
    asio::connect(socket, resolver.resolve(parsed.host, parsed.port));
    http::request<http::empty_body> req{http::verb::get,
                                        parsed.path_prefix.empty() ? "/" : parsed.path_prefix, 11};
    req.set(http::field::host, parsed.host + ":" + parsed.port);
    req.set(http::field::connection, "close");
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(socket, buffer, parser);
    if (parser.get().result_int() != 200) {
      return Unavailable("--metrics-url " + url + ": HTTP " +
                         std::to_string(parser.get().result_int()));
    }
    return std::move(parser.get().body());
  } catch (const boost::system::system_error& e) {
    return Unavailable("--metrics-url " + url + ": " + e.what());
  }
}

}  // namespace inferd::bench
