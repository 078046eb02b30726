// Crash history: the crashes of a state dir's serving processes and the
// models each was running (crashes.tsv), the management loads that cleared
// a model since (cleared.tsv), and the rule that turns them into quarantines.
//
// The files are small text files appended at start-up and at management
// loads (never on the request path), one record a line, tab-separated:
//   crashes.tsv  UNIX_SECONDS  CAUSE  MODEL:VERSION ...   (no model: none ran)
//   cleared.tsv  UNIX_SECONDS  MODEL
// A line that does not parse is skipped (a write cut by a crash). Only the
// last kKeptCrashes crashes are read.
// Thread-safety: functions of files; callers do not append concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace inferd::journal {

inline constexpr int kKeptCrashes = 256;
// Two crashes with a model running within this many seconds quarantine it.
inline constexpr int64_t kCrashWindowSeconds = 600;

struct CrashRecord {
  int64_t unix_seconds = 0;
  std::string cause;                // "signal 11 (SIGSEGV)", "exit code 3", ...
  std::vector<std::string> models;  // "model:version" running at the crash
};

Status AppendCrash(const std::string& state_dir, const CrashRecord& crash);
std::vector<CrashRecord> ReadCrashes(const std::string& state_dir);  // oldest first
Status AppendCleared(const std::string& state_dir, const std::string& model, int64_t unix_seconds);
// The last management load of each model.
std::map<std::string, int64_t> ReadCleared(const std::string& state_dir);

struct Quarantine {
  std::string model;
  int64_t version = 0;
  std::string reason;  // names both crashes: their times and causes
};
// A model version running in two crashes within kCrashWindowSeconds of each
// other, both recorded after (in a later second than) the model's last clearing, is quarantined; the reason
// names the last two such crashes. Pure: the caller reads the files.
std::vector<Quarantine> DecideQuarantines(const std::vector<CrashRecord>& crashes,
                                          const std::map<std::string, int64_t>& cleared);

// "2026-12-06 08:31:07 UTC"
std::string FormatUnixTime(int64_t unix_seconds);

}  // namespace inferd::journal
