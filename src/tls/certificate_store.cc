#include "tls/certificate_store.h"

#include <spdlog/spdlog.h>

namespace inferd::tls {

namespace ssl = boost::asio::ssl;

StatusOr<std::unique_ptr<CertificateStore>> CertificateStore::Create(const Options& options) {
  if (options.cert_path.empty() || options.key_path.empty()) {
    return InvalidArgument("TLS needs both --tls-cert FILE and --tls-key FILE");
  }
  auto store = std::unique_ptr<CertificateStore>(new CertificateStore(options));
  ASSIGN_OR_RETURN(auto context, store->Load());
  {
    MutexLock lock(&store->mu_);
    store->context_ = std::move(context);
    store->generation_ = 1;
  }
  if (options.poll_interval.count() > 0) {
    store->watcher_ =
        FileWatcher::Create({{options.cert_path, options.key_path}, options.poll_interval,
                             [s = store.get()] { (void)s->Reload(); }});
  }
  return store;
}

CertificateStore::~CertificateStore() { watcher_.reset(); }

StatusOr<std::shared_ptr<ssl::context>> CertificateStore::Load() const {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  if (ec) return Internal("TLS: cannot set the context's options: " + ec.message());
  context->use_certificate_chain_file(options_.cert_path, ec);
  if (ec) {
    return InvalidArgument("TLS: cannot load the certificate " + options_.cert_path + ": " +
                           ec.message());
  }
  context->use_private_key_file(options_.key_path, ssl::context::pem, ec);
  if (ec) {
    return InvalidArgument("TLS: cannot load the private key " + options_.key_path + " (or it " +
                           "does not match the certificate): " + ec.message());
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return InvalidArgument("TLS: the private key " + options_.key_path +
                           " does not match the certificate " + options_.cert_path);
  }
  return context;
}

std::shared_ptr<ssl::context> CertificateStore::Current() const {
  MutexLock lock(&mu_);
  return context_;
}

Status CertificateStore::Reload() {
  MutexLock one_at_a_time(&reload_mu_);
  auto context = Load();
  if (!context.ok()) {
    spdlog::error("TLS: keeping the certificate in force: {}", context.status().message());
    return context.status();
  }
  spdlog::info("TLS: loaded the certificate {} and key {} (for new connections)",
               options_.cert_path, options_.key_path);
  MutexLock lock(&mu_);
  context_ = std::move(*context);
  ++generation_;
  return Status::Ok();
}

int CertificateStore::generation() const {
  MutexLock lock(&mu_);
  return generation_;
}

}  // namespace inferd::tls
