// CertificateStore: the server's TLS certificate (chain) and private key for
// the HTTP ports (--tls-cert FILE --tls-key FILE, PEM), as an OpenSSL context
// that new connections take. The files are read at Create (an error then stops
// the start-up) and again when either changes on disk (a FileWatcher polls
// them every 0.5 s) or Reload is called (SIGHUP): the new context serves the
// connections accepted from then on, open ones keep theirs. A pair that fails
// to load (a key that does not match the certificate, a file half written)
// keeps the context in force and logs why; the next change tries again, so
// writing the certificate and then the key is fine.
//
// TLS 1.2 and 1.3 only, OpenSSL's default cipher list, no client certificates.
// gRPC reads the same files through its own watcher (grpc_server.h).
// Thread-safety: all methods from any thread.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "common/file_watcher.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace inferd::tls {

class CertificateStore {
 public:
  struct Options {
    std::string cert_path;  // PEM: the certificate, then its chain
    std::string key_path;   // PEM: the private key
    std::chrono::milliseconds poll_interval{500};  // 0 = never (only Reload)
  };

  static StatusOr<std::unique_ptr<CertificateStore>> Create(const Options& options);
  ~CertificateStore();

  // The context for a new connection; hold it for the connection's life.
  std::shared_ptr<boost::asio::ssl::context> Current() const EXCLUDES(mu_);

  // Reads the files again; on error keeps the context in force, logs and returns why.
  Status Reload() EXCLUDES(mu_);
  int generation() const EXCLUDES(mu_);  // successful loads so far (1 after Create)

  const Options& options() const { return options_; }

 private:
  explicit CertificateStore(Options options) : options_(std::move(options)) {}
  StatusOr<std::shared_ptr<boost::asio::ssl::context>> Load() const;

  const Options options_;
  mutable Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_ GUARDED_BY(mu_);
  int generation_ GUARDED_BY(mu_) = 0;
  Mutex reload_mu_;                       // one reload at a time
  std::unique_ptr<FileWatcher> watcher_;  // last: stopped first
};

}  // namespace inferd::tls
