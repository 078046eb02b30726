#include "archive/archive_registry.h"

#include <map>

#include "common/thread_annotations.h"

namespace inferd::archive {
namespace {

struct Registrations {
  Mutex mu;
  std::map<std::string, RegisteredArchive> by_name GUARDED_BY(mu);
};

Registrations& Global() {
  static Registrations* r = new Registrations();
  return *r;
}

}  // namespace

void RegisterArchive(const std::string& name, RegisteredArchive archive) {
  Registrations& r = Global();
  MutexLock lock(&r.mu);
  r.by_name[name] = std::move(archive);
}

std::optional<RegisteredArchive> FindRegisteredArchive(const std::string& name) {
  Registrations& r = Global();
  MutexLock lock(&r.mu);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end()) return std::nullopt;
  return it->second;
}

}  // namespace inferd::archive
