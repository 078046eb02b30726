#include "dashboard/thread_cpu.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "metrics/process_metrics.h"

namespace inferd::dashboard {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double TicksPerSecond() {
  static const double ticks = [] {
    const long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();
  return ticks;
}

}  // namespace

std::optional<int> ExecutorIdFromThreadName(std::string_view comm) {
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == ' ')) comm.remove_suffix(1);
  constexpr std::string_view kPrefix = "inferd-exec-";
  if (comm.substr(0, kPrefix.size()) != kPrefix || comm.size() == kPrefix.size()) {
    return std::nullopt;
  }
  comm.remove_prefix(kPrefix.size());
  int id = 0;
  auto [end, ec] = std::from_chars(comm.data(), comm.data() + comm.size(), id);
  if (ec != std::errc() || end != comm.data() + comm.size() || id < 0) return std::nullopt;
  return id;
}

std::optional<double> CpuSecondsFromStat(std::string_view stat_text) {
  auto stat = metrics::ParseProcessStat(stat_text);
  if (!stat) return std::nullopt;
  return static_cast<double>(stat->utime_ticks + stat->stime_ticks) / TicksPerSecond();
}

double ProcessCpuSeconds(const std::string& proc_self) {
  auto text = ReadSmallFile(proc_self + "/stat");
  if (!text) return 0;
  return CpuSecondsFromStat(*text).value_or(0);
}

std::map<int, double> ExecutorCpuSeconds(const std::string& proc_self) {
  std::map<int, double> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc_self + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string dir = it->path().string();
    auto comm = ReadSmallFile(dir + "/comm");
    if (!comm) continue;
    auto id = ExecutorIdFromThreadName(*comm);
    if (!id) continue;
    auto stat = ReadSmallFile(dir + "/stat");
    if (!stat) continue;
    if (auto seconds = CpuSecondsFromStat(*stat)) out[*id] += *seconds;
  }
  return out;
}

}  // namespace inferd::dashboard
