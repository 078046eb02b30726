#include "auth/key_store.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

namespace inferd::auth {

StatusOr<std::unique_ptr<KeyStore>> KeyStore::Create(const Options& options) {
  if (options.path.empty()) return InvalidArgument("--auth-keys: no file given");
  auto store = std::unique_ptr<KeyStore>(new KeyStore(options));
  ASSIGN_OR_RETURN(std::shared_ptr<const KeySet> keys, store->Read());
  {
    MutexLock lock(&store->mu_);
    store->keys_ = std::move(keys);
    store->generation_ = 1;
  }
  if (options.poll_interval.count() > 0) {
    store->watcher_ = FileWatcher::Create(
        {{options.path}, options.poll_interval, [s = store.get()] { (void)s->Reload(); }});
  }
  return store;
}

KeyStore::~KeyStore() { watcher_.reset(); }

StatusOr<std::shared_ptr<const KeySet>> KeyStore::Read() const {
  std::ifstream in(options_.path, std::ios::binary);
  if (!in) return InvalidArgument("auth keys: cannot read " + options_.path);
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(KeySet keys, KeySet::Parse(text.str(), options_.path));
  return std::make_shared<const KeySet>(std::move(keys));
}

Status KeyStore::Reload() {
  MutexLock one_at_a_time(&reload_mu_);
  auto keys = Read();
  if (!keys.ok()) {
    spdlog::error("auth keys: keeping the keys in force: {}", keys.status().message());
    return keys.status();
  }
  const KeySet& k = **keys;
  spdlog::info("auth keys: loaded {} ({} inference, {} management, {} metrics keys)",
               options_.path, k.count(Kind::kInference), k.count(Kind::kManagement),
               k.count(Kind::kMetrics));
  MutexLock lock(&mu_);
  keys_ = std::move(*keys);
  ++generation_;
  return Status::Ok();
}

Decision KeyStore::Authorize(Kind kind, std::string_view authorization) const {
  std::shared_ptr<const KeySet> keys;
  {
    MutexLock lock(&mu_);
    keys = keys_;
  }
  return keys->Authorize(kind, authorization);
}

bool KeyStore::metrics_protected() const {
  MutexLock lock(&mu_);
  return keys_->metrics_protected();
}

int KeyStore::generation() const {
  MutexLock lock(&mu_);
  return generation_;
}

}  // namespace inferd::auth
