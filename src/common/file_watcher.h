// FileWatcher: calls `on_change` when any of a few files changes on disk, by
// polling their stat() every `interval` (default 0.5 s) on a thread of its
// own. A change is any difference in inode, device, size or modification
// time, or a file appearing or disappearing; stat() follows symbolic links,
// so Kubernetes' Secret and ConfigMap volumes (an atomic swap of a `..data`
// link) are seen too. Polling, not inotify: it costs one stat() per file per
// interval and works on every file system and mount.
//
// The callback runs on the watcher's thread, never twice at once; a change
// made and undone within one interval may be missed (no file watched here is
// edited that way). Destroying the watcher stops and joins its thread (it
// waits for a callback in progress).
// Thread-safety: Create/destroy from one thread; the callback decides its own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace inferd {

// What stat() tells about a file; equal stamps = unchanged (as far as polling sees).
struct FileStamp {
  bool exists = false;
  unsigned long long device = 0, inode = 0, size = 0;
  long long mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
FileStamp StampFile(const std::string& path);

class FileWatcher {
 public:
  struct Options {
    std::vector<std::string> paths;
    std::chrono::milliseconds interval{500};
    std::function<void()> on_change;  // required
  };

  // Takes the files' stamps now (a change is measured from here) and starts the thread.
  static std::unique_ptr<FileWatcher> Create(Options options);
  ~FileWatcher();

 private:
  explicit FileWatcher(Options options);
  void Run();

  Options options_;
  std::vector<FileStamp> stamps_;  // the watcher thread's own after Create
  Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace inferd
