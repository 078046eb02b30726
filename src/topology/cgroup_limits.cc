#include "topology/cgroup_limits.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "topology/cpu_list.h"

namespace inferd::topology {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ParseInt64(const std::string& s, int64_t* out) {
  try {
    size_t used = 0;
    *out = std::stoll(s, &used);
    return used == s.size();
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<std::string> Tokens(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// One line of /proc/self/cgroup: "hierarchy-id:controllers:path".
struct CgroupEntry {
  std::vector<std::string> controllers;  // empty for the v2 line "0::/path"
  std::string controllers_field;
  std::string path;
};

std::vector<CgroupEntry> ReadSelfCgroups(const CgroupPaths& paths) {
  std::vector<CgroupEntry> entries;
  auto text = ReadFile(fs::path(paths.proc_root) / "self" / "cgroup");
  if (!text) return entries;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    CgroupEntry e;
    e.controllers_field = line.substr(a + 1, b - a - 1);
    e.path = line.substr(b + 1);
    std::istringstream cs(e.controllers_field);
    for (std::string c; std::getline(cs, c, ',');) {
      if (!c.empty()) e.controllers.push_back(c);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

// The directories from the process's cgroup up to the mount root `base`,
// innermost first. Drops leading path components until the cgroup exists
// under `base` (the container-without-cgroupns case).
std::vector<fs::path> DirsToRoot(const fs::path& base, const std::string& cgroup_path) {
  std::vector<std::string> parts;
  std::istringstream in(cgroup_path);
  for (std::string p; std::getline(in, p, '/');) {
    if (!p.empty() && p != "..") parts.push_back(p);
  }
  std::error_code ec;
  size_t first = 0;
  for (; first < parts.size(); ++first) {
    fs::path dir = base;
    for (size_t i = first; i < parts.size(); ++i) dir /= parts[i];
    if (fs::is_directory(dir, ec)) break;
  }
  std::vector<fs::path> dirs;
  for (size_t end = parts.size(); end > first; --end) {
    fs::path dir = base;
    for (size_t i = first; i < end; ++i) dir /= parts[i];
    dirs.push_back(dir);
  }
  dirs.push_back(base);
  return dirs;
}

void KeepTightest(std::optional<CpuQuota> q, CgroupLimits* limits) {
  if (!q) return;
  if (!limits->quota || q->cpus() < limits->quota->cpus()) limits->quota = std::move(q);
}

// The innermost cpu.stat from the cgroup upwards.
void FindCpuStat(const fs::path& base, const std::string& path, CgroupLimits* limits) {
  std::error_code ec;
  for (const fs::path& dir : DirsToRoot(base, path)) {
    if (limits->cpu_stat_file.empty() && fs::is_regular_file(dir / "cpu.stat", ec)) {
      limits->cpu_stat_file = (dir / "cpu.stat").string();
    }
  }
}

void ReadV2(const fs::path& base, const std::string& path, CgroupLimits* limits) {
  FindCpuStat(base, path, limits);
  for (const fs::path& dir : DirsToRoot(base, path)) {
    fs::path file = dir / "cpu.max";
    if (auto text = ReadFile(file)) {
      std::string err;
      auto q = ParseCpuMax(*text, &err);
      if (!err.empty()) limits->notes.push_back(file.string() + ": " + err);
      if (q) q->file = file.string();
      KeepTightest(std::move(q), limits);
    }
  }
}

void ReadV1Cpu(const fs::path& base, const std::string& path, CgroupLimits* limits) {
  FindCpuStat(base, path, limits);
  for (const fs::path& dir : DirsToRoot(base, path)) {
    auto quota = ReadFile(dir / "cpu.cfs_quota_us");
    auto period = ReadFile(dir / "cpu.cfs_period_us");
    if (!quota || !period) continue;
    std::string err;
    auto q = ParseCfsQuota(*quota, *period, &err);
    if (!err.empty()) limits->notes.push_back((dir / "cpu.cfs_quota_us").string() + ": " + err);
    if (q) q->file = (dir / "cpu.cfs_quota_us").string();
    KeepTightest(std::move(q), limits);
  }
}

// Reads the first non-empty cpuset file found from the cgroup upwards (the
// effective list already folds in the parents' limits).
void ReadCpuset(const fs::path& base, const std::string& path,
                const std::vector<std::string>& names, CgroupLimits* limits) {
  for (const fs::path& dir : DirsToRoot(base, path)) {
    for (const std::string& name : names) {
      auto text = ReadFile(dir / name);
      if (!text || Tokens(*text).empty()) continue;
      auto cpus = ParseCpuList(*text);
      if (!cpus.ok()) {
        limits->notes.push_back((dir / name).string() + ": " + cpus.status().message());
        continue;
      }
      limits->cpuset = limits->cpuset ? IntersectCpus(*limits->cpuset, *cpus) : *cpus;
      limits->cpuset_file = (dir / name).string();
      return;
    }
  }
}

fs::path V1Dir(const fs::path& root, const CgroupEntry& e, const std::string& controller) {
  std::error_code ec;
  fs::path joined = root / e.controllers_field;
  if (fs::is_directory(joined, ec)) return joined;
  return root / controller;
}

}  // namespace

int CpuQuota::whole_cpus() const {
  if (period_us <= 0) return 1;
  return static_cast<int>(std::max<int64_t>(1, quota_us / period_us));
}

std::optional<CpuQuota> ParseCpuMax(const std::string& text, std::string* error) {
  std::vector<std::string> t = Tokens(text);
  if (t.size() == 1 && t[0] == "max") return std::nullopt;  // period omitted is allowed on write
  CpuQuota q;
  if (t.size() == 2 && t[0] == "max") {
    if (!ParseInt64(t[1], &q.period_us) && error) *error = "bad period '" + t[1] + "'";
    return std::nullopt;
  }
  if (t.size() != 2 || !ParseInt64(t[0], &q.quota_us) || !ParseInt64(t[1], &q.period_us) ||
      q.quota_us <= 0 || q.period_us <= 0) {
    if (error) *error = "expected 'max PERIOD' or 'QUOTA PERIOD', got '" + text + "'";
    return std::nullopt;
  }
  return q;
}

std::optional<CpuQuota> ParseCfsQuota(const std::string& quota_text, const std::string& period_text,
                                      std::string* error) {
  std::vector<std::string> qt = Tokens(quota_text), pt = Tokens(period_text);
  CpuQuota q;
  if (qt.size() != 1 || pt.size() != 1 || !ParseInt64(qt[0], &q.quota_us) ||
      !ParseInt64(pt[0], &q.period_us) || q.period_us <= 0) {
    if (error)
      *error = "expected integers, got quota '" + quota_text + "' period '" + period_text + "'";
    return std::nullopt;
  }
  if (q.quota_us < 0) return std::nullopt;  // -1: unlimited
  if (q.quota_us == 0) {
    if (error) *error = "quota 0 is not valid";
    return std::nullopt;
  }
  return q;
}

CgroupLimits ReadCgroupLimits(const CgroupPaths& paths) {
  CgroupLimits limits;
  const fs::path root(paths.cgroup_root);
  std::error_code ec;
  for (const CgroupEntry& e : ReadSelfCgroups(paths)) {
    if (e.controllers_field.empty()) {
      // v2: the unified mount is the root itself, or <root>/unified on hybrid systems.
      for (const fs::path& base : {root, root / "unified"}) {
        if (!fs::exists(base / "cgroup.controllers", ec)) continue;
        ReadV2(base, e.path, &limits);
        ReadCpuset(base, e.path, {"cpuset.cpus.effective", "cpuset.cpus"}, &limits);
        break;
      }
      continue;
    }
    auto has = [&](const char* c) {
      return std::find(e.controllers.begin(), e.controllers.end(), c) != e.controllers.end();
    };
    if (has("cpu")) ReadV1Cpu(V1Dir(root, e, "cpu"), e.path, &limits);
    if (has("cpuset")) {
      ReadCpuset(V1Dir(root, e, "cpuset"), e.path, {"cpuset.effective_cpus", "cpuset.cpus"},
                 &limits);
    }
  }
  return limits;
}

}  // namespace inferd::topology
