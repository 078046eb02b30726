#include "journal/crash_history.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <deque>
#include <fstream>
#include <sstream>

namespace inferd::journal {
namespace {

std::string CrashesPath(const std::string& dir) { return dir + "/crashes.tsv"; }
std::string ClearedPath(const std::string& dir) { return dir + "/cleared.tsv"; }

// Tabs and newlines would cut a record: none in what is written.
std::string Field(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream in(line);
  while (std::getline(in, item, '\t')) out.push_back(item);
  return out;
}

bool ParseSeconds(const std::string& text, int64_t* out) {
  try {
    size_t used = 0;
    *out = std::stoll(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}

Status AppendLine(const std::string& path, const std::string& line) {
  // A line cut by a crash must not swallow this one: start on a new line.
  bool cut = false;
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      cut = in.get() != '\n';
    }
  }
  std::ofstream out(path, std::ios::app);
  if (cut) out << '\n';
  out << line << '\n';
  out.flush();
  if (!out) return Unavailable("cannot append to " + path);
  return Status::Ok();
}

}  // namespace

Status AppendCrash(const std::string& state_dir, const CrashRecord& crash) {
  std::string line = std::to_string(crash.unix_seconds) + "\t" + Field(crash.cause);
  for (const auto& m : crash.models) line += "\t" + Field(m);
  return AppendLine(CrashesPath(state_dir), line);
}

std::vector<CrashRecord> ReadCrashes(const std::string& state_dir) {
  std::deque<CrashRecord> kept;
  std::ifstream in(CrashesPath(state_dir));
  std::string line;
  while (std::getline(in, line)) {
    auto fields = SplitTabs(line);
    CrashRecord r;
    if (fields.size() < 2 || !ParseSeconds(fields[0], &r.unix_seconds)) continue;
    r.cause = fields[1];
    r.models.assign(fields.begin() + 2, fields.end());
    kept.push_back(std::move(r));
    if (kept.size() > static_cast<size_t>(kKeptCrashes)) kept.pop_front();
  }
  return {kept.begin(), kept.end()};
}

Status AppendCleared(const std::string& state_dir, const std::string& model,
                     int64_t unix_seconds) {
  return AppendLine(ClearedPath(state_dir), std::to_string(unix_seconds) + "\t" + Field(model));
}

std::map<std::string, int64_t> ReadCleared(const std::string& state_dir) {
  std::map<std::string, int64_t> out;
  std::ifstream in(ClearedPath(state_dir));
  std::string line;
  while (std::getline(in, line)) {
    auto fields = SplitTabs(line);
    int64_t t = 0;
    if (fields.size() != 2 || !ParseSeconds(fields[0], &t)) continue;
    out[fields[1]] = std::max(out[fields[1]], t);
  }
  return out;
}

std::vector<Quarantine> DecideQuarantines(const std::vector<CrashRecord>& crashes,
                                          const std::map<std::string, int64_t>& cleared) {
  // model:version -> the crashes (indices, oldest first) it was running in.
  std::map<std::string, std::vector<size_t>> running;
  for (size_t i = 0; i < crashes.size(); ++i) {
    for (const auto& m : crashes[i].models) running[m].push_back(i);
  }
  std::vector<Quarantine> out;
  for (const auto& [name, indices] : running) {
    const size_t colon = name.rfind(':');
    int64_t version = 0;
    if (colon == std::string::npos || !ParseSeconds(name.substr(colon + 1), &version)) continue;
    const std::string model = name.substr(0, colon);
    auto c = cleared.find(model);
    const int64_t since = c == cleared.end() ? INT64_MIN : c->second;
    size_t counted = 0;
    for (size_t i : indices) counted += crashes[i].unix_seconds > since ? 1 : 0;
    // The latest pair of consecutive crashes close enough, both after the clearing.
    for (size_t k = indices.size(); k >= 2; --k) {
      const CrashRecord& later = crashes[indices[k - 1]];
      const CrashRecord& earlier = crashes[indices[k - 2]];
      if (earlier.unix_seconds <= since) break;  // recorded before the clearing
      if (later.unix_seconds - earlier.unix_seconds > kCrashWindowSeconds) continue;
      Quarantine q;
      q.model = model;
      q.version = version;
      q.reason = "running in " + std::to_string(counted) +
                 " crashes of the serving process, two within " +
                 std::to_string(kCrashWindowSeconds / 60) + " minutes: " +
                 FormatUnixTime(earlier.unix_seconds) + " (" + earlier.cause + ") and " +
                 FormatUnixTime(later.unix_seconds) + " (" + later.cause + ")";
      out.push_back(std::move(q));
      break;
    }
  }
  return out;
}

std::string FormatUnixTime(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[40];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace inferd::journal
