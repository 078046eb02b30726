#include "http/dashboard_state.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <set>

#include "common/json_writer.h"
#include "http/json_body.h"
#include "http/model_metadata.h"
#include "serving/model_info.h"

namespace inferd::http {
namespace {

using dashboard::Sampler;
using repository::ModelStatus;

// The fields of GET /models that the row already shows; any other field of
// that list (added by another feature) is passed on under "extra", so that it
// shows on the page without a change here.
const std::set<std::string, std::less<>> kShownListFields = {
    "modelName",     "modelUrl",       "state",    "load",    "pinned",
    "residentBytes", "footprintBytes", "inFlight", "lastUsed"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

StatusOr<size_t> ParseCount(const std::map<std::string, std::string>& query, const char* key,
                            size_t fallback, size_t min, size_t max) {
  auto it = query.find(key);
  if (it == query.end() || it->second.empty()) return fallback;
  size_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return InvalidArgument(std::string("dashboard state: ") + key + "=" + s +
                           " is not a whole number from " + std::to_string(min) + " to " +
                           std::to_string(max));
  }
  return v;
}

// NaN and infinities (a figure not known yet) are written as null.
void Number(JsonWriter& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

void Series(JsonWriter& w, const std::vector<float>& values) {
  w.BeginArray();
  for (float v : values) {
    if (std::isfinite(v)) {
      w.Float(v);
    } else {
      w.Null();
    }
  }
  w.EndArray();
}

int64_t SecondsSince(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - t)
      .count();
}

struct Row {
  const ModelStatus* status;
  std::optional<Sampler::ModelFigures> figures;
};

double SortKey(const Row& r, const std::string& sort) {
  const auto& f = r.figures;
  if (sort == "requests") return f ? f->requests : 0;
  if (sort == "rps") return f ? f->rps : 0;
  if (sort == "p99") return f ? f->p99_ms : -1;
  if (sort == "resident") return static_cast<double>(r.status->resident_bytes);
  if (sort == "last_used") {
    return r.status->last_used ? -static_cast<double>(SecondsSince(*r.status->last_used)) : -1e18;
  }
  return 0;
}

void WriteNode(JsonWriter& w, const Sampler::NodeFigures& n) {
  const auto& facts = n.facts;
  w.BeginObject();
  w.Key("usable_cores").Int(facts.usable_cores);
  w.Key("available_cores").Int(facts.available_cores);
  w.Key("quota_cores").Int(facts.quota_cores);
  w.Key("usable_cpus").String(facts.usable_cpus);
  w.Key("origin").BeginArray();
  for (const auto& [step, value] : facts.origin) {
    w.BeginObject().Key("step").String(step).Key("value").String(value).EndObject();
  }
  w.EndArray();
  w.Key("notes").BeginArray();
  for (const auto& note : facts.notes) w.String(note);
  w.EndArray();
  w.Key("group_size").Int(facts.group_size);
  w.Key("executors").BeginArray();
  for (const auto& e : n.executors) {
    w.BeginObject();
    w.Key("id").Int(e.facts.id);
    w.Key("cpus").IntArray(e.facts.cpus);
    w.Key("num_threads").Int(e.facts.num_threads);
    w.Key("numa_node").Int(e.facts.numa_node);
    Number(w.Key("busy"), e.busy);
    Series(w.Key("busy_series"), e.busy_series);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ticks").Uint(n.ticks);
  Number(w.Key("requests"), n.requests);
  Number(w.Key("rps"), n.rps);
  Number(w.Key("cpu_cores"), n.cpu_cores);
  w.Key("rss_bytes").Int(n.rss_bytes);
  w.Key("memory_budget_bytes").Int(n.budget_bytes);
  w.Key("model_bytes").Int(n.model_bytes);
  Number(w.Key("loads"), n.loads);
  Number(w.Key("load_failures"), n.load_failures);
  Number(w.Key("evictions"), n.evictions);
  Number(w.Key("cache_hits"), n.cache_hits);
  Number(w.Key("cache_misses"), n.cache_misses);
  w.Key("series").BeginObject();
  for (const auto& [name, values] : n.series) Series(w.Key(name), values);
  w.EndObject();
  w.EndObject();
}

// The generic fields of GET /models for `rows`, by model name.
std::map<std::string, std::vector<std::pair<std::string, std::string>>> ExtraFields(
    const std::vector<Row>& rows) {
  std::vector<ModelStatus> page;
  page.reserve(rows.size());
  for (const Row& r : rows) page.push_back(*r.status);
  std::string list = WriteTorchServeModelList(page);
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  ReservePadding(list);
  auto doc = ParseJsonBody(list, std::string::npos, "model list");
  if (!doc.ok()) return out;
  simdjson::dom::array models;
  if (doc->root()["models"].get(models) != simdjson::SUCCESS) return out;
  for (simdjson::dom::object m : models) {
    std::string_view name;
    if (m["modelName"].get(name) != simdjson::SUCCESS) continue;
    auto& fields = out[std::string(name)];
    for (auto [key, value] : m) {
      if (kShownListFields.count(key)) continue;
      fields.emplace_back(std::string(key), simdjson::minify(value));
    }
  }
  return out;
}

void WriteModel(JsonWriter& w, const Row& row,
                const std::vector<std::pair<std::string, std::string>>& extra, bool series) {
  const ModelStatus& m = *row.status;
  const repository::VersionStatus* shown = serving::DefaultVersion(m);
  w.BeginObject();
  w.Key("name").String(m.name);
  w.Key("state").String(repository::ModelStateName(m.state));
  // A quarantined model's reason (the crashes it was running in, the forwards
  // given up) is why it does not serve: shown before any load error.
  const std::string& reason = m.state == repository::ModelState::kQuarantined && !m.reason.empty()
                                  ? m.reason
                              : shown && !shown->error.empty() ? shown->error
                                                               : m.error;
  w.Key("reason").String(reason);
  w.Key("version");
  if (shown) {
    w.Int(shown->version);
  } else {
    w.Null();
  }
  w.Key("versions").Int(static_cast<int64_t>(m.versions.size()));
  w.Key("load").String(repository::LoadPolicyName(m.load));
  w.Key("pinned").Bool(m.pinned);
  w.Key("resident_bytes").Int(m.resident_bytes);
  w.Key("footprint_bytes").Int(shown ? shown->footprint.bytes : 0);
  w.Key("in_flight").Int(m.in_flight);
  w.Key("last_used_s_ago");
  if (m.last_used) {
    w.Int(SecondsSince(*m.last_used));
  } else {
    w.Null();
  }
  w.Key("precision").String(m.config ? std::string(config::Name(m.config->precision))
                                     : std::string());
  w.Key("max_batch_size").Int(m.config ? m.config->max_batch_size : 0);
  const Sampler::ModelFigures f = row.figures.value_or(Sampler::ModelFigures{});
  Number(w.Key("requests"), f.requests);
  Number(w.Key("errors"), f.errors);
  Number(w.Key("rps"), f.rps);
  Number(w.Key("p50_ms"), f.p50_ms >= 0 ? f.p50_ms : NAN);
  Number(w.Key("p99_ms"), f.p99_ms >= 0 ? f.p99_ms : NAN);
  Number(w.Key("queue_depth"), f.queue_depth);
  w.Key("batches").Uint(f.batches);
  Number(w.Key("batch_mean"), f.batches > 0 ? f.batch_mean : NAN);
  w.Key("batch_sizes").BeginObject();
  for (const auto& [bound, count] : f.batch_sizes) {
    w.Key(std::isfinite(bound) ? std::to_string(static_cast<int64_t>(bound)) : "+Inf").Uint(count);
  }
  w.EndObject();
  w.Key("extra").BeginObject();
  for (const auto& [key, raw] : extra) {
    w.Key(key);
    w.BeginRawValue() += raw;
  }
  w.EndObject();
  if (series) {
    w.Key("series").BeginObject();
    Series(w.Key("rps"), f.rps_series);
    Series(w.Key("p99_ms"), f.p99_series);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

StatusOr<DashboardQuery> ParseDashboardQuery(const std::map<std::string, std::string>& query) {
  DashboardQuery q;
  ASSIGN_OR_RETURN(q.offset, ParseCount(query, "offset", 0, 0, 1u << 30));
  ASSIGN_OR_RETURN(q.limit, ParseCount(query, "limit", 100, 1, 1000));
  if (auto it = query.find("filter"); it != query.end()) q.filter = Lower(it->second);
  if (auto it = query.find("sort"); it != query.end() && !it->second.empty()) {
    static const std::set<std::string> kSorts = {"name", "state",    "requests", "rps",
                                                 "p99",  "resident", "last_used"};
    if (!kSorts.count(it->second)) {
      return InvalidArgument("dashboard state: sort=" + it->second +
                             " is not one of name, state, requests, rps, p99, resident, "
                             "last_used");
    }
    q.sort = it->second;
  }
  if (auto it = query.find("series"); it != query.end()) {
    if (it->second != "0" && it->second != "1") {
      return InvalidArgument("dashboard state: series=" + it->second + " is not 0 or 1");
    }
    q.series = it->second == "1";
  }
  return q;
}

std::string WriteDashboardState(const std::vector<ModelStatus>& models, const Sampler& sampler,
                                const DashboardQuery& query) {
  const Sampler::NodeFigures node = sampler.Node();
  std::map<std::string, int> states;
  std::vector<Row> rows;
  for (const auto& m : models) {
    const std::string_view state = repository::ModelStateName(m.state);
    ++states[std::string(state)];
    if (!query.filter.empty() && Lower(m.name).find(query.filter) == std::string::npos &&
        Lower(state).find(query.filter) == std::string::npos) {
      continue;
    }
    rows.push_back({&m, std::nullopt});
  }
  const bool by_figure = query.sort != "name" && query.sort != "state";
  // Figures are read for every matching row only when the order needs them.
  if (by_figure) {
    for (Row& r : rows) r.figures = sampler.Model(r.status->name, false);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (query.sort == "name") return a.status->name < b.status->name;
    if (query.sort == "state") {
      return repository::ModelStateName(a.status->state) <
             repository::ModelStateName(b.status->state);
    }
    return SortKey(a, query.sort) > SortKey(b, query.sort);
  });
  const size_t matched = rows.size();
  const size_t first = std::min(query.offset, rows.size());
  const size_t last = std::min(rows.size(), first + query.limit);
  std::vector<Row> page(rows.begin() + static_cast<std::ptrdiff_t>(first),
                        rows.begin() + static_cast<std::ptrdiff_t>(last));
  for (Row& r : page) r.figures = sampler.Model(r.status->name, query.series);
  const auto extra = ExtraFields(page);

  JsonWriter w;
  w.BeginObject();
  w.Key("server").BeginObject();
  w.Key("name").String(serving::kServerName);
  w.Key("version").String(serving::kServerVersion);
  w.EndObject();
  Number(w.Key("period_s"), node.period_s);
  w.Key("capacity").Uint(node.capacity);
  w.Key("node");
  WriteNode(w, node);
  w.Key("models_total").Uint(models.size());
  w.Key("models_matched").Uint(matched);
  w.Key("states").BeginObject();
  for (const auto& [state, count] : states) w.Key(state).Int(count);
  w.EndObject();
  w.Key("offset").Uint(first);
  w.Key("limit").Uint(query.limit);
  w.Key("sort").String(query.sort);
  w.Key("models").BeginArray();
  static const std::vector<std::pair<std::string, std::string>> kNone;
  for (const Row& r : page) {
    auto it = extra.find(r.status->name);
    WriteModel(w, r, it == extra.end() ? kNone : it->second, query.series);
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace inferd::http
