#include "common/file_watcher.h"

#include <sys/stat.h>

namespace inferd {

FileStamp StampFile(const std::string& path) {
  struct stat st {};
  FileStamp stamp;
  if (::stat(path.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.device = st.st_dev;
  stamp.inode = st.st_ino;
  stamp.size = static_cast<unsigned long long>(st.st_size);
  stamp.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  return stamp;
}

std::unique_ptr<FileWatcher> FileWatcher::Create(Options options) {
  auto watcher = std::unique_ptr<FileWatcher>(new FileWatcher(std::move(options)));
  watcher->thread_ = std::thread([w = watcher.get()] { w->Run(); });
  return watcher;
}

FileWatcher::FileWatcher(Options options) : options_(std::move(options)) {
  for (const auto& path : options_.paths) stamps_.push_back(StampFile(path));
}

FileWatcher::~FileWatcher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void FileWatcher::Run() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    wake_.WaitFor(&mu_, options_.interval);
    if (stopping_) break;
    lock.Unlock();
    bool changed = false;
    for (size_t i = 0; i < options_.paths.size(); ++i) {
      FileStamp now = StampFile(options_.paths[i]);
      if (now != stamps_[i]) {
        stamps_[i] = now;
        changed = true;
      }
    }
    if (changed) options_.on_change();
    lock.Lock();
  }
}

}  // namespace inferd
