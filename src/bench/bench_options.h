// BenchOptions: everything one `inferd bench` run is told, with defaults that
// suit a quick sweep on a small machine. AddBenchFlags (bench_flags.h) maps
// them to command-line flags; RunBench (bench_runner.h) executes them.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/arrival_schedule.h"
#include "common/status.h"

namespace inferd::bench {

enum class RequestForm {
  kRaw,       // POST /predictions/{model}[/{version}], the file as the body (TorchServe)
  kV2Json,    // POST /v2/models/{model}[/versions/{v}]/infer, a JSON body file as is
  kV2Binary,  // same path, JSON header + binary tensors, with Inference-Header-Content-Length
};

enum class Protocol {
  kHttp,  // the forms above over HTTP/1.1
  kGrpc,  // inference.GRPCInferenceService/ModelInfer: --form v2binary or raw (grpc_request.h)
};

struct BenchOptions {
  // http://host[:port][/prefix] (a path prefix is kept), or grpc://host[:port] with --protocol grpc
  std::string url = "http://127.0.0.1:8080";
  Protocol protocol = Protocol::kHttp;
  std::string model;    // required
  std::string version;  // empty: the server's default version
  RequestForm form = RequestForm::kRaw;
  std::string input;                // a body file, or a folder whose files are sent round robin
  std::int64_t header_length = -1;  // v2binary: JSON header bytes; -1 finds the JSON's end
  std::vector<std::string> http_headers;  // "Name: value" sent with each HTTP request (an API key)

  // Load: closed loop (one step per concurrency) or open loop (one step per
  // rate), not both. Neither given: closed loop at concurrency 1.
  std::vector<int> concurrency;
  std::vector<double> rates;  // requests/s
  Arrivals arrivals = Arrivals::kConstant;
  int max_connections = 64;  // open loop: connections opened at most

  // Measurement: per step, `warmup_s` unrecorded, then windows of `duration_s`
  // until the last `windows` agree within `stability_pct` % or `max_windows`.
  // `--windows 1 --max-windows 1` measures exactly one window.
  double duration_s = 5;
  double warmup_s = 2;
  int windows = 3;
  int max_windows = 10;
  double stability_pct = 10;
  double timeout_s = 30;   // a response later than this is a failure
  std::uint64_t seed = 1;  // Poisson arrivals

  // Output; empty paths write nothing.
  std::string json_path;
  std::string csv_path;
  std::string plot_path;         // SVG: throughput vs p50/p99 latency
  std::string metrics_url;       // the server's /metrics: server-side time per step
  double latency_budget_ms = 0;  // > 0: report the highest step within it
  int budget_percentile = 99;    // 50, 90, 95 or 99
  bool progress = true;          // one line per window on stderr
};

struct ParsedUrl {
  std::string scheme;  // "http" or "grpc"
  std::string host;
  std::string port;         // "80" (http) or "8001" (grpc) when absent
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
};

// Accepts http://host[:port][/prefix] and grpc://host[:port]; anything else is InvalidArgument.
StatusOr<ParsedUrl> ParseUrl(const std::string& url);

// Checks the options for consistency, with messages naming the flag.
Status ValidateOptions(const BenchOptions& options);

std::string_view RequestFormName(RequestForm form);
std::string_view ArrivalsName(Arrivals arrivals);
std::string_view ProtocolName(Protocol protocol);

}  // namespace inferd::bench
