// CrashRecovery: the serving process's side of the crash journal
// (docs/ROBUSTNESS.md, "Crashes"). At start it reads what the previous
// serving process left in --state-dir (which model versions were running
// when it died, and how it died, from the supervisor's --previous-exit),
// records that crash in crashes.tsv, makes a fresh forward journal for this
// process, writes serving.pid, and exports the restarts and the last crash in
// /metrics. QuarantineAtStart then applies the rule of crash_history.h
// (two crashes within ten minutes quarantine the model that ran in both);
// a management load of a model forgets its crashes (OnLoadAsked).
//
// Thread-safety: Start and QuarantineAtStart on the main thread at start;
// Mark from the repository's load threads (the journal's Register locks);
// OnLoadAsked from network threads (a mutex orders the appends).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "journal/forward_journal.h"
#include "metrics/registry.h"
#include "repository/model_repository.h"

namespace inferd::app {

class CrashRecovery {
 public:
  struct Options {
    std::string state_dir;
    std::string previous_exit;  // from the supervisor; "" = none (a first start, or no supervisor)
    int restarts = 0;           // by the supervisor so far
    metrics::Registry* metrics = nullptr;
  };
  // Errors: kUnavailable when the state dir or the journal cannot be made.
  static StatusOr<std::unique_ptr<CrashRecovery>> Start(const Options& options);

  // What each forward of `model` `version` marks (ModelSpec::forward_mark).
  journal::ForwardMark Mark(const std::string& model, int64_t version);
  // Quarantines the versions the crash history condemns; before StartEagerLoads.
  void QuarantineAtStart(repository::ModelRepository& repository);
  void OnLoadAsked(const std::string& model);
  // A drain's end: what still runs is abandoned on purpose, not a crash.
  void MarkClean() { journal_->MarkClean(); }

 private:
  CrashRecovery(Options options, std::unique_ptr<journal::ForwardJournal> journal)
      : options_(std::move(options)), journal_(std::move(journal)) {}

  const Options options_;
  const std::unique_ptr<journal::ForwardJournal> journal_;
  std::mutex cleared_mu_;  // orders the appends to cleared.tsv
};

}  // namespace inferd::app
