#include "bench/bench_flags.h"

#include <CLI/CLI.hpp>
#include <map>
#include <string>

namespace inferd::bench {

void AddBenchFlags(CLI::App* sub, BenchOptions* o) {
  const std::map<std::string, RequestForm> forms = {{"raw", RequestForm::kRaw},
                                                    {"v2json", RequestForm::kV2Json},
                                                    {"v2binary", RequestForm::kV2Binary}};
  const std::map<std::string, Arrivals> arrivals = {{"constant", Arrivals::kConstant},
                                                    {"poisson", Arrivals::kPoisson}};
  const std::map<std::string, Protocol> protocols = {{"http", Protocol::kHttp},
                                                     {"grpc", Protocol::kGrpc}};
  sub->add_option("--url", o->url,
                  "server base URL: http://host:port, or grpc://host:port with --protocol grpc")
      ->capture_default_str();
  sub->add_option("--protocol", o->protocol,
                  "http, or grpc: KServe v2 ModelInfer calls (--form v2binary: inputs as "
                  "raw_input_contents; --form raw: the file as one BYTES input)")
      ->transform(CLI::CheckedTransformer(protocols, CLI::ignore_case).description("http|grpc"))
      ->default_str("http");
  sub->add_option("--model", o->model, "model name")->required();
  sub->add_option("--version", o->version, "model version (default: the server's default)");
  sub->add_option("--form", o->form,
                  "raw: POST /predictions/{model} with the file as body (content type from its "
                  "extension); v2json: the file as a KServe v2 JSON body; v2binary: JSON header "
                  "+ binary tensors")
      ->transform(
          CLI::CheckedTransformer(forms, CLI::ignore_case).description("raw|v2json|v2binary"))
      ->default_str("raw");
  sub->add_option("--input", o->input, "request body file, or a folder of them (round robin)")
      ->required();
  sub->add_option("--header-length", o->header_length,
                  "v2binary: bytes of JSON header (default: found by parsing the JSON)");
  sub->add_option("--http-header", o->http_headers,
                  "'Name: value' added to each HTTP request, e.g. 'Authorization: Bearer KEY' "
                  "(repeatable)");
  sub->add_option("--concurrency", o->concurrency,
                  "closed loop: a sweep of concurrencies, e.g. 1,2,4,8,16 (default 1)")
      ->delimiter(',');
  sub->add_option("--rate", o->rates,
                  "open loop: a sweep of request rates per second, e.g. 50,100,200; latency is "
                  "measured from each request's intended send time")
      ->delimiter(',');
  sub->add_option("--arrivals", o->arrivals, "open loop arrivals: constant or poisson")
      ->transform(
          CLI::CheckedTransformer(arrivals, CLI::ignore_case).description("constant|poisson"))
      ->default_str("constant");
  sub->add_option("--max-connections", o->max_connections,
                  "open loop: connections opened at most; further due requests wait (and the "
                  "wait counts in their latency)")
      ->capture_default_str();
  sub->add_option("--duration", o->duration_s, "length of one measurement window, seconds")
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup_s, "seconds at the start of each step not recorded")
      ->capture_default_str();
  sub->add_option("--windows", o->windows, "a step is stable when this many trailing windows agree")
      ->capture_default_str();
  sub->add_option("--max-windows", o->max_windows, "windows per step at most")
      ->capture_default_str();
  sub->add_option("--stability-pct", o->stability_pct,
                  "allowed spread of throughput and p50 across those windows, percent")
      ->capture_default_str();
  sub->add_option("--timeout", o->timeout_s, "a response later than this (seconds) is a failure")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the Poisson arrivals")->capture_default_str();
  sub->add_option("--json", o->json_path, "write the results as JSON to this file");
  sub->add_option("--csv", o->csv_path, "write the results as CSV to this file");
  sub->add_option("--plot", o->plot_path, "write throughput vs p50/p99 latency as SVG");
  sub->add_option("--metrics-url", o->metrics_url,
                  "the server's Prometheus metrics, e.g. http://127.0.0.1:8082/metrics: adds "
                  "inferd's own request count and time per request (total, queued, compute) to "
                  "each step");
  sub->add_option("--latency-budget-ms", o->latency_budget_ms,
                  "report the highest-throughput step whose latency percentile is within this");
  sub->add_option("--budget-percentile", o->budget_percentile, "50, 90, 95 or 99")
      ->capture_default_str();
  sub->add_flag("!--no-progress", o->progress, "no progress lines on stderr");
}

}  // namespace inferd::bench
