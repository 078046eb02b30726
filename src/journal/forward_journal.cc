#include "journal/forward_journal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace inferd::journal {
namespace internal {

inline constexpr char kMagic[8] = {'I', 'N', 'F', 'J', 'R', 'N', 'L', '1'};

struct JournalFile {
  char magic[8];
  int64_t pid;
  uint32_t clean;
  uint32_t models;
  char pad[40];
  struct Model {
    char name[kJournalNameBytes];
    int64_t version;
  } table[kJournalModels];
  uint32_t slots[kJournalSlots * kJournalSlotWords];
};
static_assert(sizeof(JournalFile::Model) == 128);
static_assert(offsetof(JournalFile, table) == 64);

}  // namespace internal

using internal::JournalFile;

namespace {

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

StatusOr<std::unique_ptr<ForwardJournal>> ForwardJournal::Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable(Errno("cannot create the forward journal", path));
  if (::ftruncate(fd, sizeof(JournalFile)) != 0) {
    ::close(fd);
    return Unavailable(Errno("cannot size the forward journal", path));
  }
  void* mapped = ::mmap(nullptr, sizeof(JournalFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (mapped == MAP_FAILED) return Unavailable(Errno("cannot map the forward journal", path));
  auto* file = static_cast<JournalFile*>(mapped);  // zeroed by ftruncate
  std::memcpy(file->magic, internal::kMagic, sizeof(file->magic));
  file->pid = ::getpid();
  return std::unique_ptr<ForwardJournal>(new ForwardJournal(file, file->slots));
}

ForwardJournal::~ForwardJournal() { ::munmap(file_, sizeof(JournalFile)); }

uint32_t ForwardJournal::Register(const std::string& model, int64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = std::min(model.size(), kJournalNameBytes - 1);
  for (uint32_t i = 0; i < models_; ++i) {
    const auto& m = file_->table[i];
    if (m.version == version && std::strncmp(m.name, model.c_str(), n) == 0 && m.name[n] == 0) {
      return i + 1;
    }
  }
  if (models_ == kJournalModels) return kJournalUnnamed;
  auto& m = file_->table[models_];
  std::memcpy(m.name, model.data(), n);
  m.name[n] = 0;
  m.version = version;
  ++models_;
  // Published before any forward can store the number (the model is not in
  // the scheduler yet); a reader after a crash sees both or an empty slot.
  std::atomic_ref<uint32_t>(file_->models).store(models_, std::memory_order_release);
  return models_;
}

void ForwardJournal::MarkClean() {
  std::atomic_ref<uint32_t>(file_->clean).store(1, std::memory_order_release);
}

StatusOr<JournalSnapshot> ReadJournal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("no forward journal at " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != sizeof(JournalFile) ||
      std::memcmp(bytes.data(), internal::kMagic, sizeof(internal::kMagic)) != 0) {
    return FailedPrecondition(path + " is not a forward journal of this inferd (" +
                    std::to_string(bytes.size()) + " bytes)");
  }
  auto file = std::make_unique<JournalFile>();
  std::memcpy(file.get(), bytes.data(), sizeof(JournalFile));
  JournalSnapshot snap;
  snap.pid = file->pid;
  snap.clean = file->clean != 0;
  if (snap.clean) return snap;
  const uint32_t models = std::min<uint32_t>(file->models, kJournalModels);
  for (int s = 0; s < kJournalSlots; ++s) {
    const uint32_t id = file->slots[s * kJournalSlotWords];
    if (id == 0) continue;
    std::string name = "?";
    if (id <= models) {
      const auto& m = file->table[id - 1];
      name = std::string(m.name, strnlen(m.name, kJournalNameBytes)) + ":" +
             std::to_string(m.version);
    }
    if (std::find(snap.running.begin(), snap.running.end(), name) == snap.running.end()) {
      snap.running.push_back(name);
    }
  }
  return snap;
}

}  // namespace inferd::journal
