#include "http/request_head.h"

#include <charconv>
#include <chrono>
#include <cstdint>

#include "http/json_body.h"

namespace inferd::http {
namespace {

namespace bhttp = boost::beast::http;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

void SplitTarget(std::string_view target, HttpRequest& req) {
  size_t q = target.find('?');
  req.path = PercentDecode(target.substr(0, q), false);
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    std::string key = PercentDecode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
    if (!key.empty()) req.query[key] = value;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

HttpRequest ToHttpRequest(BeastRequest&& message, TimePoint received) {
  HttpRequest req;
  req.method = std::string(message.method_string());
  auto target = message.target();
  SplitTarget(std::string_view(target.data(), target.size()), req);
  req.content_type = std::string(message[bhttp::field::content_type]);
  auto ihcl = message.find("Inference-Header-Content-Length");
  if (ihcl != message.end()) req.inference_header_length = std::string(ihcl->value());
  req.received = received;
  auto timeout = message.find("X-Request-Timeout-Ms");
  if (timeout != message.end()) {
    const auto text = timeout->value();
    req.timeout_deadline =
        ParseRequestTimeout(std::string_view(text.data(), text.size()), received);
  }
  *req.body = std::move(message.body());
  ReservePadding(*req.body);
  return req;
}

StatusOr<TimePoint> ParseRequestTimeout(std::string_view text, TimePoint received) {
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms <= 0) {
    return InvalidArgument(
        "header X-Request-Timeout-Ms: expected a positive integer (milliseconds), got '" +
        std::string(text) + "'");
  }
  return DeadlineAfter(received, ms > INT64_MAX / 1000 ? std::chrono::microseconds::max()
                                                       : std::chrono::microseconds(ms * 1000));
}

}  // namespace inferd::http
