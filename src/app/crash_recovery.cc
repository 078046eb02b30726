#include "app/crash_recovery.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "journal/crash_history.h"

namespace inferd::app {
namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// What the previous serving process left: the crash to record, if any.
std::optional<journal::CrashRecord> PreviousCrash(const std::string& journal_path,
                                                  const std::string& previous_exit) {
  auto snap = journal::ReadJournal(journal_path);
  if (!snap.ok() && snap.status().code() != StatusCode::kNotFound) {
    spdlog::warn("crash journal: {}; starting a new one", snap.status().message());
  }
  journal::CrashRecord crash;
  crash.unix_seconds = UnixNow();
  crash.cause = previous_exit;
  if (snap.ok() && !snap->clean) crash.models = snap->running;
  // Forwards were running, no supervisor saw the end: Kubernetes (or a
  // person) restarted the whole process, or the supervisor died with it.
  if (crash.cause.empty() && !crash.models.empty()) {
    crash.cause = "unknown: process " + std::to_string(snap->pid) +
                  " ended while forwards ran, not restarted by a supervisor";
  }
  if (crash.cause.empty()) return std::nullopt;
  return crash;
}

}  // namespace

StatusOr<std::unique_ptr<CrashRecovery>> CrashRecovery::Start(const Options& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.state_dir, ec);
  if (ec) return Unavailable("cannot make --state-dir " + options.state_dir + ": " + ec.message());
  const std::string path = options.state_dir + "/forward-journal";
  if (auto crash = PreviousCrash(path, options.previous_exit)) {
    spdlog::error("crash journal: the previous serving process died ({}) while running {}",
                  crash->cause, crash->models.empty() ? "no forward" : Join(crash->models));
    if (Status st = journal::AppendCrash(options.state_dir, *crash); !st.ok()) {
      spdlog::warn("crash journal: {}", st.message());
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<journal::ForwardJournal> forward_journal,
                   journal::ForwardJournal::Create(path));
  {
    const std::string pid_path = options.state_dir + "/serving.pid";
    std::ofstream(pid_path + ".tmp") << ::getpid() << "\n";
    std::filesystem::rename(pid_path + ".tmp", pid_path, ec);
  }
  if (auto* m = options.metrics) {
    m->GetCounter("inferd_restarts_total",
                  "serving processes the supervisor started again after one died unasked")
        .Increment(options.restarts);
    const auto crashes = journal::ReadCrashes(options.state_dir);
    if (!crashes.empty()) {
      const auto& last = crashes.back();
      m->GetGauge("inferd_last_crash_timestamp_seconds",
                  "when the last crash of a serving process of this state dir was recorded")
          .Set(static_cast<double>(last.unix_seconds));
      m->GetGauge("inferd_last_crash_info",
                  "the last crash: how the serving process died and the models running",
                  {{"cause", last.cause}, {"models", Join(last.models)}})
          .Set(1);
    }
  }
  return std::unique_ptr<CrashRecovery>(new CrashRecovery(options, std::move(forward_journal)));
}

journal::ForwardMark CrashRecovery::Mark(const std::string& model, int64_t version) {
  return {journal_.get(), journal_->Register(model, version)};
}

void CrashRecovery::QuarantineAtStart(repository::ModelRepository& repository) {
  const auto decisions = journal::DecideQuarantines(journal::ReadCrashes(options_.state_dir),
                                                    journal::ReadCleared(options_.state_dir));
  for (const auto& q : decisions) {
    Status st = repository.Quarantine(q.model, q.version, q.reason);
    if (!st.ok()) spdlog::warn("crash journal: not quarantined: {}", st.message());
  }
}

void CrashRecovery::OnLoadAsked(const std::string& model) {
  std::lock_guard<std::mutex> lock(cleared_mu_);
  if (Status st = journal::AppendCleared(options_.state_dir, model, UnixNow()); !st.ok()) {
    spdlog::warn("crash journal: {}", st.message());
  }
}

}  // namespace inferd::app
