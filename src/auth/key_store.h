// KeyStore: the keys of the --auth-keys file as they are now. The file is read
// at Create (an error then stops the start-up), and again when it changes on
// disk (a FileWatcher polls it every 0.5 s) or when Reload is called (SIGHUP).
// A new version that fails to parse or validate keeps the keys in force and
// logs why (never a key); the next change tries again. Rotation is then:
// add the new key beside the old one, move the clients, remove the old key;
// within about a second of each write the server follows. Replace the file
// atomically (write another file, rename it over; Kubernetes Secret volumes
// do so), or a poll may see it half written (which fails to parse or drops a
// key for a moment).
//
// Authorize takes the set in force under the lock (a shared_ptr copy) and
// hashes and compares outside it; a reload parses outside the lock and swaps
// the set in under it.
// Thread-safety: all methods from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "auth/authorizer.h"
#include "auth/key_set.h"
#include "common/file_watcher.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace inferd::auth {

class KeyStore : public Authorizer {
 public:
  struct Options {
    std::string path;  // the YAML file (key_set.h)
    // How often the file's stat() is polled; 0 = never (only Reload).
    std::chrono::milliseconds poll_interval{500};
  };

  static StatusOr<std::unique_ptr<KeyStore>> Create(const Options& options);
  ~KeyStore() override;

  Decision Authorize(Kind kind, std::string_view authorization) const override EXCLUDES(mu_);
  bool metrics_protected() const override EXCLUDES(mu_);

  // Reads the file again; on error keeps the keys in force, logs and returns why.
  Status Reload() EXCLUDES(mu_);
  // Successful loads so far (1 after Create).
  int generation() const EXCLUDES(mu_);

 private:
  explicit KeyStore(Options options) : options_(std::move(options)) {}
  StatusOr<std::shared_ptr<const KeySet>> Read() const;

  const Options options_;
  mutable Mutex mu_;
  std::shared_ptr<const KeySet> keys_ GUARDED_BY(mu_);
  int generation_ GUARDED_BY(mu_) = 0;
  Mutex reload_mu_;  // one reload at a time (the watcher, SIGHUP)
  std::unique_ptr<FileWatcher> watcher_;  // last: stopped first
};

}  // namespace inferd::auth
