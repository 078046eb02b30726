#include "plan/traffic_metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/text_format.h"

namespace inferd::plan {
namespace {

// The value of label `name` in `a="x",b="y"`; empty if absent. Unescapes \" and \\.
std::string LabelValue(std::string_view labels, std::string_view name) {
  size_t pos = 0;
  while (pos < labels.size()) {
    const size_t eq = labels.find("=\"", pos);
    if (eq == std::string_view::npos) return {};
    const std::string_view key = labels.substr(pos, eq - pos);
    std::string value;
    size_t i = eq + 2;
    for (; i < labels.size() && labels[i] != '"'; ++i) {
      if (labels[i] == '\\' && i + 1 < labels.size()) ++i;
      value += labels[i];
    }
    if (key == name) return value;
    pos = i + 1;
    if (pos < labels.size() && labels[pos] == ',') ++pos;
  }
  return {};
}

double Get(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// A model's share of one server's window.
struct ServerShare {
  double requests = 0;
  double cpu_seconds = 0;
};

}  // namespace

StatusOr<ServerScrape> ParseScrape(std::string_view text, const std::string& url) {
  ServerScrape s;
  s.url = url;
  bool inferd = false;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '#') continue;
    std::string_view name, labels, rest;
    const size_t brace = line.find('{');
    const size_t space = line.find(' ');
    if (brace != std::string_view::npos && brace < space) {
      const size_t close = line.rfind('}');
      if (close == std::string_view::npos || close < brace) continue;
      name = line.substr(0, brace);
      labels = line.substr(brace + 1, close - brace - 1);
      rest = line.substr(close + 1);
    } else {
      if (space == std::string_view::npos) continue;
      name = line.substr(0, space);
      rest = line.substr(space);
    }
    // strtod on a copy: the value may be followed by a timestamp.
    const double value = std::strtod(std::string(rest).c_str(), nullptr);
    if (name.starts_with("inferd_")) inferd = true;
    if (name == "process_cpu_seconds_total") s.process_cpu_seconds = value;
    if (name == "inferd_model_resident_bytes") s.resident_bytes = value;
    if (name == "inferd_models_loaded") s.models_loaded = value;
    const std::string model = LabelValue(labels, "model");
    if (model.empty()) continue;
    if (name == "inferd_requests_total") {
      s.requests[model] += value;
      continue;  // requests for a model the server does not serve count there too
    }
    if (name == "inferd_compute_duration_seconds_sum") s.compute_seconds[model] += value;
    if (name == "inferd_preprocess_duration_seconds_sum") s.preprocess_seconds[model] += value;
    if (name == "inferd_batch_size_sum") s.batch_items[model] += value;
    if (name == "inferd_batch_size_count") s.batches[model] += value;
    if (name == "inferd_queue_depth" || name == "inferd_batch_size_count" ||
        name == "inferd_compute_duration_seconds_count") {
      s.models[model] = true;  // served here: its queue or batches exist
    }
  }
  if (!inferd) {
    return InvalidArgument("--from-metrics " + url + ": no inferd_ series: not an inferd /metrics");
  }
  if (s.process_cpu_seconds < 0) {
    return InvalidArgument("--from-metrics " + url +
                           ": no process_cpu_seconds_total: the CPU per request cannot be derived");
  }
  return s;
}

StatusOr<std::vector<MeasuredModel>> MeasureFromScrapes(const std::vector<ServerScrape>& before,
                                                        const std::vector<ServerScrape>& after,
                                                        double window_s,
                                                        const std::vector<ModelDemand>& base,
                                                        const std::string& base_file) {
  if (!(window_s > 0)) return InvalidArgument("--metrics-window must be > 0 seconds");
  std::map<std::string, std::vector<ServerShare>> shares;  // model -> per server
  std::map<std::string, int64_t> single_model_memory;      // from one-model servers
  std::map<std::string, double> cpu_share_of_server;       // for the comment: the largest share
  for (size_t s = 0; s < after.size(); ++s) {
    const ServerScrape& a = after[s];
    const ServerScrape& b = before[s];
    const double cpu = a.process_cpu_seconds - b.process_cpu_seconds;
    if (cpu < 0) {
      return InvalidArgument("--from-metrics " + a.url +
                             ": process_cpu_seconds_total went down: the server restarted during "
                             "the window; measure again");
    }
    // Each served model's requests and time of work in the window.
    std::map<std::string, double> requests, work;
    double total_work = 0, total_requests = 0;
    for (const auto& [model, served] : a.models) {
      const double r = Get(a.requests, model) - Get(b.requests, model);
      if (r < 0) {
        return InvalidArgument("--from-metrics " + a.url + ": inferd_requests_total of '" + model +
                               "' went down: the server restarted during the window");
      }
      const double items = Get(a.batch_items, model) - Get(b.batch_items, model);
      const double batches = Get(a.batches, model) - Get(b.batches, model);
      const double mean_batch = batches > 0 && items > 0 ? items / batches : 1.0;
      const double w =
          std::max(0.0,
                   (Get(a.compute_seconds, model) - Get(b.compute_seconds, model)) / mean_batch) +
          std::max(0.0, Get(a.preprocess_seconds, model) - Get(b.preprocess_seconds, model));
      requests[model] = r;
      work[model] = w;
      total_work += w;
      total_requests += r;
    }
    for (const auto& [model, r] : requests) {
      ServerShare share;
      share.requests = r;
      const double part =
          total_work > 0 ? work[model] / total_work : (total_requests > 0 ? r / total_requests : 0);
      share.cpu_seconds = cpu * part;
      shares[model].push_back(share);
      cpu_share_of_server[model] = std::max(cpu_share_of_server[model], part);
    }
    // One model loaded, and it is the one with traffic: the resident sum is its memory.
    if (a.models_loaded == 1 && a.resident_bytes > 0 && total_requests > 0) {
      std::string only;
      int with_traffic = 0;
      for (const auto& [model, r] : requests) {
        if (r > 0) {
          only = model;
          ++with_traffic;
        }
      }
      if (with_traffic == 1) {
        single_model_memory[only] =
            std::max(single_model_memory[only], static_cast<int64_t>(a.resident_bytes));
      }
    }
  }

  std::vector<MeasuredModel> out;
  std::map<std::string, const ModelDemand*> in_base;
  for (const ModelDemand& m : base) in_base[m.name] = &m;
  std::vector<std::string> missing_memory;
  // The base file's models first, in its order, then the others by name.
  std::vector<std::string> order;
  for (const ModelDemand& m : base) order.push_back(m.name);
  for (const auto& [model, list] : shares) {
    if (!in_base.count(model)) order.push_back(model);
  }
  for (const std::string& model : order) {
    MeasuredModel mm;
    mm.demand.name = model;
    const ModelDemand* file = in_base.count(model) ? in_base[model] : nullptr;
    auto s = shares.find(model);
    if (s == shares.end()) {  // no server reports it: the file's figures stand
      mm.demand = *file;
      mm.demand.line = 0;
      mm.how = "served by no scraped server: rps and core_ms from " + base_file;
      out.push_back(std::move(mm));
      continue;
    }
    double requests = 0, cpu = 0;
    for (const ServerShare& share : s->second) {
      requests += share.requests;
      cpu += share.cpu_seconds;
    }
    mm.demand.rps = requests / window_s;
    mm.demand.core_ms = requests > 0 ? cpu / requests * 1000.0 : (file ? file->core_ms : 0);
    mm.how = std::to_string(s->second.size()) +
             (s->second.size() == 1 ? " server, " : " servers, ") + FormatFixed(requests, 0) +
             " requests in " + FormatFixed(window_s, 1) + " s, up to " +
             FormatFixed(100 * cpu_share_of_server[model], 1) + "% of a server's CPU";
    if (requests == 0)
      mm.how += file ? " (no requests: core_ms from " + base_file + ")" : " (no requests)";
    if (file) {
      mm.demand.memory_bytes = file->memory_bytes;
      mm.how += "; memory from " + base_file;
    } else if (single_model_memory.count(model)) {
      mm.demand.memory_bytes = single_model_memory[model];
      mm.how += "; memory: inferd_model_resident_bytes of its one-model server";
    } else {
      missing_memory.push_back(model);
    }
    out.push_back(std::move(mm));
  }
  if (!missing_memory.empty()) {
    std::string names;
    for (const std::string& m : missing_memory) names += (names.empty() ? "" : ", ") + m;
    return InvalidArgument(
        "--from-metrics: no memory for " + names +
        ": inferd's /metrics has no per-model resident series (only inferd_model_resident_bytes, "
        "the sum, which is one model's only on a server with one model loaded); give --models "
        "FILE with their memory (e.g. measured by --profile-store)");
  }
  return out;
}

StatusOr<std::vector<MeasuredModel>> MeasureTraffic(const std::vector<std::string>& urls,
                                                    double window_s, const MetricsFetcher& fetch,
                                                    const std::vector<ModelDemand>& base,
                                                    const std::string& base_file) {
  if (urls.empty()) return InvalidArgument("--from-metrics: no URL");
  if (!(window_s > 0)) return InvalidArgument("--metrics-window must be > 0 seconds");
  auto scrape_all = [&]() -> StatusOr<std::vector<ServerScrape>> {
    std::vector<ServerScrape> scrapes;
    for (const std::string& url : urls) {
      auto text = fetch(url);
      if (!text.ok()) {
        return InvalidArgument("--from-metrics " + url + ": " + text.status().message());
      }
      ASSIGN_OR_RETURN(ServerScrape s, ParseScrape(*text, url));
      scrapes.push_back(std::move(s));
    }
    return scrapes;
  };
  ASSIGN_OR_RETURN(auto before, scrape_all());
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
  ASSIGN_OR_RETURN(auto after, scrape_all());
  // The window as it was: the second round of fetches may have taken a while.
  const double measured =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return MeasureFromScrapes(before, after, measured, base, base_file);
}

std::string FormatMeasuredModels(const std::vector<MeasuredModel>& models,
                                 const std::vector<std::string>& urls, double window_s) {
  std::string out =
      "# Measured by `inferd plan --from-metrics` over " + FormatFixed(window_s, 1) + " s from:";
  for (const std::string& u : urls) out += " " + u;
  out +=
      "\n# rps: requests in the window / its length; core_ms: each server's process CPU shared "
      "by its models' forward and pre-processing time, per request.\nmodels:\n";
  for (const MeasuredModel& m : models) {
    char line[512];
    std::snprintf(line, sizeof line, "  - {name: %s, rps: %.4f, core_ms: %.4f, memory: %lld}  # ",
                  m.demand.name.c_str(), m.demand.rps, m.demand.core_ms,
                  static_cast<long long>(m.demand.memory_bytes));
    out += line + m.how + "\n";
  }
  return out;
}

}  // namespace inferd::plan
