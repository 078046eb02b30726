#include "repository/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace inferd::repository {
namespace {

// Cgroup files write "no limit" as "max" (v2) or a huge page-rounded number (v1).
constexpr int64_t kUnlimitedAbove = int64_t{1} << 60;

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<int64_t> ParseLimit(const std::string& text) {
  if (text.empty() || text == "max") return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    if (v > (kUnlimitedAbove - 9) / 10) return std::nullopt;  // past any real limit
    v = v * 10 + (c - '0');
  }
  if (v <= 0 || v >= kUnlimitedAbove) return std::nullopt;
  return v;
}

// The tightest limit in `file` from <mount>/<cgroup path> up to <mount>.
std::optional<MemoryLimit> TightestOnPath(const std::string& mount, std::string path,
                                          const std::string& file, const std::string& label) {
  std::optional<MemoryLimit> best;
  while (true) {
    const std::string full = mount + path + (path == "/" || path.empty() ? "" : "/") + file;
    if (auto line = ReadFirstLine(full)) {
      if (auto v = ParseLimit(*line); v && (!best || *v < best->bytes)) {
        best = MemoryLimit{*v, label + " " + full};
      }
    }
    if (path.empty() || path == "/") break;
    const size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return best;
}

std::optional<MemoryLimit> CgroupLimit(const MemoryPaths& paths) {
  std::ifstream in(paths.proc_root + "/self/cgroup");
  std::string line;
  std::optional<MemoryLimit> best;
  auto take = [&](std::optional<MemoryLimit> l) {
    if (l && (!best || l->bytes < best->bytes)) best = l;
  };
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) {
      take(TightestOnPath(paths.cgroup_root, path, "memory.max", "cgroup v2"));
      take(TightestOnPath(paths.cgroup_root + "/unified", path, "memory.max", "cgroup v2"));
    }
    std::stringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ',')) {
      if (c == "memory") {
        take(TightestOnPath(paths.cgroup_root + "/memory", path, "memory.limit_in_bytes",
                            "cgroup v1"));
      }
    }
  }
  return best;
}

// The bytes of a "Key:   N kB" line of a /proc file (meminfo, status).
std::optional<int64_t> ReadKiBLine(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    int64_t kb = -1;
    if (!(fields >> kb) || kb < 0) return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

std::optional<int64_t> MemTotal(const MemoryPaths& paths) {
  return ReadKiBLine(paths.proc_root + "/meminfo", "MemTotal:");
}

}  // namespace

std::optional<MemoryLimit> ReadCgroupMemoryLimit(const MemoryPaths& paths) {
  return CgroupLimit(paths);
}

StatusOr<MemoryLimit> ReadMemoryLimit(const MemoryPaths& paths) {
  const std::optional<int64_t> total = MemTotal(paths);
  std::optional<MemoryLimit> cgroup = CgroupLimit(paths);
  if (cgroup && (!total || cgroup->bytes < *total)) return *cgroup;
  if (total) return MemoryLimit{*total, paths.proc_root + "/meminfo MemTotal"};
  return Unavailable(
      "cannot tell how much memory this process may use: no cgroup memory limit "
      "and no MemTotal in " +
      paths.proc_root +
      "/meminfo; give "
      "--memory-budget in bytes");
}

StatusOr<int64_t> ResolveMemoryBudget(std::string_view text, std::string* note,
                                      const MemoryPaths& paths) {
  if (text.empty() || text == "none" || text == "0") return int64_t{0};
  if (text == "auto") {
    auto limit = ReadMemoryLimit(paths);
    if (!limit.ok()) return limit.status();
    const auto budget =
        static_cast<int64_t>(static_cast<double>(limit->bytes) * kAutoBudgetFraction);
    if (note) {
      *note = "memory budget auto: " + FormatBytes(budget) + " = " +
              std::to_string(static_cast<int>(kAutoBudgetFraction * 100)) + "% of " +
              FormatBytes(limit->bytes) + " (" + limit->source + ")";
    }
    return budget;
  }
  auto bytes = ParseByteSize(text);
  if (!bytes.ok()) return bytes.status().WithContext("--memory-budget");
  return bytes;
}

int64_t ReadResidentBytes(const MemoryPaths& paths) {
  std::ifstream in(paths.proc_root + "/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

int64_t TakePeakResidentBytes(const MemoryPaths& paths) {
  const std::optional<int64_t> peak = ReadKiBLine(paths.proc_root + "/self/status", "VmHWM:");
  std::ofstream clear(paths.proc_root + "/self/clear_refs");
  clear << "5";
  clear.flush();
  if (!clear || !peak) return 0;
  return *peak;
}

}  // namespace inferd::repository
