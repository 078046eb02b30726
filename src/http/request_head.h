// ToHttpRequest: a parsed Boost.Beast request -> the HttpRequest handlers see
// (method, percent-decoded path and query, the headers the routes read, the
// body moved in with simdjson's padding reserved behind it).
//
// Split out of Connection so that the conversion of client bytes is tested
// and fuzzed (tests/fuzz/http_head) without a socket. Pure functions; any thread.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <string_view>

#include "http/http_message.h"

namespace inferd::http {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// Moves the body out of `message`. `received` stamps the request.
HttpRequest ToHttpRequest(BeastRequest&& message, TimePoint received);

// The X-Request-Timeout-Ms header's text -> its deadline, `received` plus
// that many milliseconds (saturating). kInvalidArgument quoting the text for
// anything but a positive integer.
StatusOr<TimePoint> ParseRequestTimeout(std::string_view text, TimePoint received);

// "/a%20b?x=1&y" -> path "/a b", query {x: 1, y: ""} (plus as space in the query only).
void SplitTarget(std::string_view target, HttpRequest& req);

}  // namespace inferd::http
