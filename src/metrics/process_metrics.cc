#include "metrics/process_metrics.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

namespace inferd::metrics {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ParseU64(std::string_view s, uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> Fields(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n' && text[j] != '\t') ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// Counter set to an absolute reading: adds what it grew by since the last one.
void Advance(Counter& c, double reading) {
  if (reading > c.value()) c.Increment(reading - c.value());
}

size_t CountOpenFds(const std::string& proc_self) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(proc_self + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// "Max open files  1024  4096  files" from /proc/self/limits: the soft limit.
std::optional<double> MaxFds(const std::string& proc_self) {
  auto text = ReadFile(proc_self + "/limits");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    auto f = Fields(std::string_view(line).substr(14));
    uint64_t v = 0;
    if (!f.empty() && ParseU64(f[0], &v)) return static_cast<double>(v);
  }
  return std::nullopt;
}

// Boot time in seconds since the epoch, for process_start_time_seconds.
std::optional<double> BootTime() {
  auto text = ReadFile("/proc/stat");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) != 0) continue;
    uint64_t v = 0;
    if (ParseU64(line.substr(6), &v)) return static_cast<double>(v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcessStat> ParseProcessStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After ')': field 3 (state) onwards; index k here is field k + 3.
  auto f = Fields(text.substr(close + 1));
  if (f.size() < 22) return std::nullopt;
  ProcessStat s;
  auto field = [&](int number, uint64_t* out) { return ParseU64(f[static_cast<size_t>(number - 3)], out); };
  if (!field(10, &s.minor_faults) || !field(12, &s.major_faults) || !field(14, &s.utime_ticks) ||
      !field(15, &s.stime_ticks) || !field(22, &s.start_ticks) || !field(23, &s.vsize_bytes) ||
      !field(24, &s.rss_pages)) {
    return std::nullopt;
  }
  return s;
}

std::optional<CpuThrottling> ParseCpuStat(std::string_view text) {
  CpuThrottling t;
  bool any = false;
  auto f = Fields(text);
  for (size_t i = 0; i + 1 < f.size(); i += 2) {
    uint64_t v = 0;
    if (!ParseU64(f[i + 1], &v)) continue;
    if (f[i] == "nr_periods") {
      t.periods = v;
    } else if (f[i] == "nr_throttled") {
      t.throttled_periods = v;
      any = true;
    } else if (f[i] == "throttled_usec") {
      t.throttled_seconds = static_cast<double>(v) / 1e6;
    } else if (f[i] == "throttled_time") {
      t.throttled_seconds = static_cast<double>(v) / 1e9;
    }
  }
  if (!any) return std::nullopt;
  return t;
}

void ExportProcessMetrics(Registry& r, const ProcessMetricsOptions& options) {
  struct Series {
    std::mutex mu;
    Counter* cpu;
    Gauge* rss;
    Gauge* vsize;
    Gauge* open_fds;
    Gauge* max_fds;
    Gauge* start_time;
    Counter* minor;
    Counter* major;
    Counter* periods = nullptr;
    Counter* throttled = nullptr;
    Counter* throttled_s = nullptr;
  };
  auto s = std::make_shared<Series>();
  s->cpu = &r.GetCounter("process_cpu_seconds_total", "user and system CPU time spent, seconds");
  s->rss = &r.GetGauge("process_resident_memory_bytes", "resident memory size, bytes");
  s->vsize = &r.GetGauge("process_virtual_memory_bytes", "virtual memory size, bytes");
  s->open_fds = &r.GetGauge("process_open_fds", "open file descriptors");
  s->max_fds = &r.GetGauge("process_max_fds", "maximum number of open file descriptors");
  s->start_time =
      &r.GetGauge("process_start_time_seconds", "start time of the process since the epoch, seconds");
  const std::string faults_help =
      "page faults of the process (minor: a page mapped without I/O, e.g. memory the allocator "
      "returned to the kernel and touched again; major: read from disk)";
  s->minor = &r.GetCounter("inferd_process_page_faults_total", faults_help, {{"kind", "minor"}});
  s->major = &r.GetCounter("inferd_process_page_faults_total", faults_help, {{"kind", "major"}});
  if (!options.cpu_stat_file.empty()) {
    s->periods = &r.GetCounter("inferd_cgroup_cpu_periods_total",
                               "CFS enforcement periods of the process's cgroup (cpu.stat)");
    s->throttled = &r.GetCounter("inferd_cgroup_cpu_throttled_periods_total",
                                 "periods in which the cgroup was throttled by its CPU quota");
    s->throttled_s = &r.GetCounter("inferd_cgroup_cpu_throttled_seconds_total",
                                   "time the cgroup's threads were throttled, seconds");
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const std::optional<double> boot = BootTime();
  r.AddCollector([s, options, ticks, page, boot] {
    std::lock_guard<std::mutex> lock(s->mu);
    if (auto text = ReadFile(options.proc_self + "/stat")) {
      if (auto st = ParseProcessStat(*text)) {
        Advance(*s->cpu, static_cast<double>(st->utime_ticks + st->stime_ticks) / ticks);
        s->rss->Set(static_cast<double>(st->rss_pages) * page);
        s->vsize->Set(static_cast<double>(st->vsize_bytes));
        Advance(*s->minor, static_cast<double>(st->minor_faults));
        Advance(*s->major, static_cast<double>(st->major_faults));
        if (boot) s->start_time->Set(*boot + static_cast<double>(st->start_ticks) / ticks);
      }
    }
    s->open_fds->Set(static_cast<double>(CountOpenFds(options.proc_self)));
    if (auto max = MaxFds(options.proc_self)) s->max_fds->Set(*max);
    if (s->periods) {
      if (auto text = ReadFile(options.cpu_stat_file)) {
        if (auto t = ParseCpuStat(*text)) {
          Advance(*s->periods, static_cast<double>(t->periods));
          Advance(*s->throttled, static_cast<double>(t->throttled_periods));
          Advance(*s->throttled_s, t->throttled_seconds);
        }
      }
    }
  });
}

}  // namespace inferd::metrics
