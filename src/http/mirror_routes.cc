#include "http/mirror_routes.h"

#include <cstdio>

#include "common/json_writer.h"
#include "http/json_body.h"
#include "http/status_map.h"
#include "mirror/mirror_set.h"

namespace inferd::http {
namespace {

void WriteOptional(JsonWriter& w, const char* key, const std::optional<double>& v) {
  w.Key(key);
  if (v) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void WriteLatency(JsonWriter& w, const char* key, const mirror::LatencySummary& l) {
  w.Key(key).BeginObject();
  w.Key("p50_ms").Double(l.p50_ms);
  w.Key("p99_ms").Double(l.p99_ms);
  w.Key("samples").Int(l.samples);
  w.EndObject();
}

void Answer(mirror::MirrorSet* mirrors, const std::string& model, const Responder& respond) {
  auto report = mirrors->Report(model);
  if (!report.ok()) return Reply(respond, ErrorResponse(report.status()));
  Reply(respond, JsonResponse(200, WriteMirrorReport(*report)));
}

Status NoMirrors() { return Unavailable("this server runs without traffic mirroring"); }

// The PUT body: every field but `to` optional (the defaults of MirrorConfig).
StatusOr<config::MirrorConfig> ParseMirrorBody(const std::string& body) {
  ASSIGN_OR_RETURN(JsonDocument doc, ParseJsonBody(body));
  simdjson::dom::object o;
  if (doc.root().get(o)) {
    return InvalidArgument("expected a JSON object {\"to\": ..., \"fraction\": ..., "
                           "\"max_in_flight\": ..., \"timeout_ms\": ...}");
  }
  config::MirrorConfig c;
  for (auto [key, value] : o) {
    if (key == "to") {
      std::string_view to;
      if (value.get(to)) return InvalidArgument("mirror.to: expected a string");
      c.to = std::string(to);
    } else if (key == "fraction") {
      if (value.get(c.fraction)) {
        int64_t i = 0;
        if (value.get(i)) return InvalidArgument("mirror.fraction: expected a number from 0 to 1");
        c.fraction = static_cast<double>(i);
      }
    } else if (key == "max_in_flight") {
      int64_t i = 0;
      if (value.get(i) || i < 1 || i > 4096) {
        return InvalidArgument("mirror.max_in_flight: expected an integer from 1 to 4096");
      }
      c.max_in_flight = static_cast<int>(i);
    } else if (key == "timeout_ms") {
      if (value.get(c.timeout_ms)) {
        return InvalidArgument("mirror.timeout_ms: expected an integer from 1 to 3600000");
      }
    } else {
      return InvalidArgument("mirror." + std::string(key) +
                             ": unknown key (known: to, fraction, max_in_flight, timeout_ms)");
    }
  }
  RETURN_IF_ERROR(config::ValidateMirrorConfig(c));
  return c;
}

}  // namespace

std::string WriteMirrorReport(const mirror::MirrorReport& r) {
  const mirror::ComparisonSummary& c = r.comparison;
  JsonWriter w;
  w.BeginObject();
  w.Key("model").String(r.model);
  w.Key("to").String(r.config.to);
  w.Key("candidate").String(r.candidate_kind);
  w.Key("fraction").Double(r.config.fraction);
  w.Key("max_in_flight").Int(r.config.max_in_flight);
  w.Key("timeout_ms").Int(r.config.timeout_ms);
  w.Key("seen").Int(r.seen);
  w.Key("mirrored").Int(r.mirrored);
  w.Key("compared").Int(c.compared);
  w.Key("mismatched").Int(c.mismatched);
  w.Key("dropped").Int(r.dropped);
  w.Key("candidate_errors").Int(r.candidate_errors);
  w.Key("candidate_timeouts").Int(r.candidate_timeouts);
  w.Key("primary_errors").Int(r.primary_errors);
  w.Key("in_flight").Int(r.in_flight);
  w.Key("no_spare_executor").Int(r.no_spare_executor);
  w.Key("sampled_down").Int(r.sampled_down);
  w.Key("effective_fraction").Double(r.effective_fraction);
  w.Key("candidate_slowdown").Double(r.candidate_slowdown);
  w.Key("last_candidate_error").String(r.last_candidate_error);
  WriteOptional(w, "top1_agreement", c.top1_agreement);
  w.Key("max_abs_error").Double(c.max_abs_error);
  w.Key("mean_abs_error").Double(c.mean_abs_error);
  w.Key("latency").BeginObject();
  WriteLatency(w, "primary", c.primary);
  WriteLatency(w, "candidate", c.candidate);
  w.EndObject();
  w.Key("outputs").BeginArray();
  for (const auto& o : c.outputs) {
    w.BeginObject();
    w.Key("name").String(o.name);
    w.Key("compared").Int(o.compared);
    w.Key("elements").Int(o.elements);
    WriteOptional(w, "top1_agreement", o.top1_agreement);
    w.Key("max_abs_error").Double(o.max_abs_error);
    w.Key("mean_abs_error").Double(o.mean_abs_error);
    w.EndObject();
  }
  w.EndArray();
  w.Key("top_disagreements").BeginArray();
  for (const auto& d : c.top_disagreements) {
    w.BeginObject();
    w.Key("seq").Uint(d.input.seq);
    w.Key("id").String(d.input.id);
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(d.input.hash));
    w.Key("input_fnv1a64").String(hash);
    w.Key("input_bytes").Int(d.input.bytes);
    w.Key("input_head_hex").String(d.input.head_hex);
    w.Key("top1_disagree").Int(d.top1_disagree);
    w.Key("max_abs_error").Double(d.max_abs_error);
    w.Key("primary_top1").Int(d.primary_top1);
    w.Key("candidate_top1").Int(d.candidate_top1);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

void AddMirrorReportRoute(Router& router, mirror::MirrorSet* mirrors) {
  router.Add("GET", "/v2/models/{model}/mirror",
             [mirrors](const HttpRequest&, const PathParams& p, Responder respond) {
               if (!mirrors) return Reply(respond, ErrorResponse(NoMirrors()));
               Answer(mirrors, p.at("model"), respond);
             });
}

void AddMirrorManagementRoutes(Router& router, mirror::MirrorSet* mirrors) {
  router.Add("GET", "/models/{model}/mirror",
             [mirrors](const HttpRequest&, const PathParams& p, Responder respond) {
               if (!mirrors) return Reply(respond, ErrorResponse(NoMirrors()));
               Answer(mirrors, p.at("model"), respond);
             });
  router.Add("PUT", "/models/{model}/mirror",
             [mirrors](const HttpRequest& http, const PathParams& p, Responder respond) {
               if (!mirrors) return Reply(respond, ErrorResponse(NoMirrors()));
               auto config = ParseMirrorBody(*http.body);
               if (!config.ok()) return Reply(respond, ErrorResponse(config.status()));
               // A remote host name is resolved here, on the network thread
               // (once, at set-up; a literal address resolves at once).
               Status st = mirrors->Set(p.at("model"), *config);
               if (!st.ok()) return Reply(respond, ErrorResponse(st));
               Answer(mirrors, p.at("model"), respond);
             });
  router.Add("DELETE", "/models/{model}/mirror",
             [mirrors](const HttpRequest&, const PathParams& p, Responder respond) {
               if (!mirrors) return Reply(respond, ErrorResponse(NoMirrors()));
               const std::string& model = p.at("model");
               auto last = mirrors->Report(model);
               if (!last.ok()) return Reply(respond, ErrorResponse(last.status()));
               Status st = mirrors->Remove(model);
               if (!st.ok()) return Reply(respond, ErrorResponse(st));
               Reply(respond, JsonResponse(200, WriteMirrorReport(*last)));
             });
}

}  // namespace inferd::http
