// An HTTP/1.1 request as read from a socket: Boost.Beast's parser with the
// server's limits, the conversion to HttpRequest (http/request_head.h), then
// route matching on the inference and management route tables, and the 404 /
// 405 answers, which quote the client's path and must stay valid JSON.
#include <boost/beast/http/parser.hpp>

#include "fuzz_util.h"
#include "http/inference_routes.h"
#include "http/management_routes.h"
#include "http/request_head.h"
#include "http/router.h"
#include "http/v2_routes.h"

namespace {

namespace bhttp = boost::beast::http;
using inferd::http::Router;

// Route tables only: no handler is called (their context is empty).
Router MakeRouter() {
  Router router;
  const inferd::serving::Services services;
  inferd::http::AddTorchServeInferenceRoutes(router, services);
  inferd::http::AddV2InferenceRoutes(router, services);
  inferd::http::AddManagementRoutes(router, services);
  return router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Router router = MakeRouter();
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(8 * 1024);
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::beast::error_code ec;
  boost::asio::const_buffer rest(data, size);
  while (!parser.is_done()) {
    const size_t used = parser.put(rest, ec);
    rest += used;
    if (ec == bhttp::error::need_more) ec = {};
    if (ec) return 0;  // refused: the connection answers 400/413/431
    // The input ends inside the message. Beast may also answer an empty
    // buffer with no error and no progress (a body shorter than its
    // Content-Length): without this the loop spun for ever (a fuzzing
    // timeout, crashes/timeout-0de7a15e...; the server reads through
    // async_read, which waits for more bytes instead).
    if (used == 0) break;
  }
  if (!parser.is_done()) {
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
  }
  inferd::http::HttpRequest req = inferd::http::ToHttpRequest(parser.release(), {});
  FUZZ_CHECK(req.body->capacity() >= req.body->size() + simdjson::SIMDJSON_PADDING, "padding");
  Router::Match match = router.Find(req.method, req.path);
  if (!match.handler) {
    router.Dispatch(req, [](inferd::http::ResponseMaker make) {
      inferd::http::HttpResponse r = make();
      FUZZ_CHECK(r.status == 404 || r.status == 405, std::to_string(r.status));
      inferd::fuzz::CheckJson(r.body);
    });
  }
  return 0;
}
