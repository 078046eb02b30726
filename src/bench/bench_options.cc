#include "bench/bench_options.h"

#include <cmath>

namespace inferd::bench {

StatusOr<ParsedUrl> ParseUrl(const std::string& url) {
  ParsedUrl out;
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    out.scheme = "http";
    rest = url.substr(7);
  } else if (url.rfind("grpc://", 0) == 0) {
    out.scheme = "grpc";
    rest = url.substr(7);
  } else {
    return InvalidArgument(
        "--url: expected http://host[:port][/prefix] or grpc://host[:port], got '" + url +
        "' (https is not supported)");
  }
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    out.path_prefix = rest.substr(slash);
    while (!out.path_prefix.empty() && out.path_prefix.back() == '/') out.path_prefix.pop_back();
  }
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    out.host = authority.substr(0, colon);
    out.port = authority.substr(colon + 1);
  } else {
    out.host = authority;
    out.port = out.scheme == "grpc" ? "8001" : "80";
  }
  if (out.host.empty()) return InvalidArgument("--url: no host in '" + url + "'");
  if (out.port.empty() || out.port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--url: bad port '" + out.port + "' in '" + url + "'");
  }
  return out;
}

Status ValidateOptions(const BenchOptions& o) {
  ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(o.url));
  if ((url.scheme == "grpc") != (o.protocol == Protocol::kGrpc)) {
    return InvalidArgument("--url: --protocol " + std::string(ProtocolName(o.protocol)) +
                           " needs a " + std::string(ProtocolName(o.protocol)) + ":// URL, got '" +
                           o.url + "'");
  }
  if (o.protocol == Protocol::kGrpc) {
    if (!url.path_prefix.empty()) return InvalidArgument("--url: a grpc:// URL has no path");
    if (o.form == RequestForm::kV2Json) {
      return InvalidArgument(
          "--protocol grpc takes --form v2binary (inputs as raw_input_contents) or --form raw "
          "(the file as one BYTES input)");
    }
  }
  if (!o.metrics_url.empty()) {
    ASSIGN_OR_RETURN(ParsedUrl metrics, ParseUrl(o.metrics_url));
    if (metrics.scheme != "http") return InvalidArgument("--metrics-url: expected an http:// URL");
  }
  if (o.model.empty()) return InvalidArgument("--model is required");
  if (o.input.empty()) return InvalidArgument("--input FILE|DIR is required");
  if (!o.concurrency.empty() && !o.rates.empty()) {
    return InvalidArgument("give --concurrency (closed loop) or --rate (open loop), not both");
  }
  for (int c : o.concurrency) {
    if (c < 1) return InvalidArgument("--concurrency: values must be >= 1");
  }
  for (double r : o.rates) {
    if (!(r > 0) || !std::isfinite(r)) return InvalidArgument("--rate: values must be > 0");
  }
  if (o.max_connections < 1) return InvalidArgument("--max-connections must be >= 1");
  if (!(o.duration_s > 0)) return InvalidArgument("--duration must be > 0 seconds");
  if (o.warmup_s < 0) return InvalidArgument("--warmup must be >= 0 seconds");
  if (o.windows < 1) return InvalidArgument("--windows must be >= 1");
  if (o.max_windows < o.windows) return InvalidArgument("--max-windows must be >= --windows");
  if (o.stability_pct < 0) return InvalidArgument("--stability-pct must be >= 0");
  if (!(o.timeout_s > 0)) return InvalidArgument("--timeout must be > 0 seconds");
  if (o.budget_percentile != 50 && o.budget_percentile != 90 && o.budget_percentile != 95 &&
      o.budget_percentile != 99) {
    return InvalidArgument("--budget-percentile must be 50, 90, 95 or 99");
  }
  if (o.header_length >= 0 && o.form != RequestForm::kV2Binary) {
    return InvalidArgument("--header-length applies to --form v2binary only");
  }
  return Status::Ok();
}

std::string_view RequestFormName(RequestForm form) {
  switch (form) {
    case RequestForm::kRaw:
      return "raw";
    case RequestForm::kV2Json:
      return "v2json";
    case RequestForm::kV2Binary:
      return "v2binary";
  }
  return "?";
}

std::string_view ProtocolName(Protocol protocol) {
  return protocol == Protocol::kGrpc ? "grpc" : "http";
}

std::string_view ArrivalsName(Arrivals arrivals) {
  return arrivals == Arrivals::kConstant ? "constant" : "poisson";
}

}  // namespace inferd::bench
