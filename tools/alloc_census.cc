// alloc_census: an LD_PRELOAD library that counts a running inferd's heap
// allocations through tcmalloc's MallocHook (inferd links tcmalloc; the hook
// sees malloc, calloc, realloc and operator new alike), split into executor
// threads ("inferd-exec-*") and the rest, by size class, with the exact sizes
// and the call stacks (module+offset, for addr2line) of the large ones
// (>= 64 KiB). `kill -USR2 PID` writes the counts so far to
// $ALLOC_CENSUS_OUT.N (N = 1, 2, ...); the difference of two snapshots is what
// a measured window allocated. A measuring tool, not part of the server.
//
//   g++ -O2 -shared -fPIC -o build/alloc_census.so tools/alloc_census.cc -ltcmalloc_minimal
//   then start the server with ALLOC_CENSUS_OUT=/tmp/census LD_PRELOAD=build/alloc_census.so
//   in its environment, as tools/alloc_census.sh does.
//
// The hook runs inside malloc and allocates nothing; only large blocks (rare:
// tens per batch) take a spin lock to record their stack.
#include <dlfcn.h>
#include <execinfo.h>
#include <gperftools/malloc_hook_c.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kKinds = 2;  // 0: executor threads, 1: the others
constexpr int kClasses = 4;
constexpr size_t kBounds[kClasses - 1] = {4096, 65536, 1 << 20};
constexpr size_t kLarge = 65536;
constexpr int kSlots = 4096;

struct Counters {
  std::atomic<unsigned long> count[kClasses];
  std::atomic<unsigned long> bytes[kClasses];
  std::atomic<size_t> large_size[kSlots];  // 0 = empty slot
  std::atomic<unsigned long> large_count[kSlots];
};

Counters g_counters[kKinds];

constexpr int kDepth = 28;
constexpr int kSites = 16384;
struct Site {
  int kind = 0;
  size_t size = 0;
  int depth = 0;
  void* frames[kDepth] = {};
  unsigned long count = 0;
};
Site g_sites[kSites];
int g_used_sites = 0;  // guarded by g_sites_lock; a full table drops new sites
std::atomic_flag g_sites_lock = ATOMIC_FLAG_INIT;
thread_local bool t_in_hook = false;  // backtrace() may allocate once

void RecordSite(int kind, size_t size) {
  if (t_in_hook) return;
  t_in_hook = true;
  void* frames[kDepth];
  const int depth = backtrace(frames, kDepth);
  size_t h = size;
  for (int d = 0; d < depth; ++d) h = h * 31 + reinterpret_cast<size_t>(frames[d]);
  while (g_sites_lock.test_and_set(std::memory_order_acquire)) {
  }
  for (int probe = 0; probe < kSites; ++probe) {
    Site& s = g_sites[(h + probe) % kSites];
    if (s.count == 0) {  // a free slot: the site is new
      s.kind = kind;
      s.size = size;
      s.depth = depth;
      std::memcpy(s.frames, frames, sizeof(void*) * depth);
      s.count = 1;
      ++g_used_sites;
      break;
    }
    if (s.kind == kind && s.size == size && s.depth == depth &&
        std::memcmp(s.frames, frames, sizeof(void*) * depth) == 0) {
      ++s.count;
      break;
    }
  }
  g_sites_lock.clear(std::memory_order_release);
  t_in_hook = false;
}
std::atomic<bool> g_dump{false};

// -1: not known yet; rechecked for a thread's first allocations, because a
// thread is named by its own code shortly after it starts.
thread_local int t_kind = -1;
thread_local int t_checks = 0;

int ThreadKind() {
  if (t_kind >= 0) return t_kind;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  const bool exec = std::strncmp(name, "inferd-exec-", 12) == 0;
  if (exec || ++t_checks > 256) t_kind = exec ? 0 : 1;
  return exec ? 0 : 1;
}

void OnNew(const void* ptr, size_t size) {
  if (ptr == nullptr) return;
  Counters& c = g_counters[ThreadKind()];
  int k = 0;
  while (k < kClasses - 1 && size >= kBounds[k]) ++k;
  c.count[k].fetch_add(1, std::memory_order_relaxed);
  c.bytes[k].fetch_add(size, std::memory_order_relaxed);
  if (size < kLarge) return;
  RecordSite(ThreadKind(), size);
  for (size_t i = 0, h = (size * 0x9E3779B97F4A7C15ull) >> 52; i < kSlots; ++i) {
    const size_t s = (h + i) % kSlots;
    size_t expected = 0;
    if (c.large_size[s].load(std::memory_order_relaxed) == size ||
        c.large_size[s].compare_exchange_strong(expected, size) || expected == size) {
      c.large_count[s].fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

void Dump(int n) {
  const char* base = std::getenv("ALLOC_CENSUS_OUT");
  char path[600];
  char final_path[512];
  std::snprintf(final_path, sizeof final_path, "%s.%d", base ? base : "/tmp/alloc_census", n);
  std::snprintf(path, sizeof path, "%s.tmp", final_path);  // renamed when complete
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  const char* kinds[kKinds] = {"exec", "other"};
  const char* classes[kClasses] = {"<4KiB", "4KiB-64KiB", "64KiB-1MiB", ">=1MiB"};
  for (int k = 0; k < kKinds; ++k) {
    for (int c = 0; c < kClasses; ++c) {
      std::fprintf(f, "class %s %s %lu %lu\n", kinds[k], classes[c], g_counters[k].count[c].load(),
                   g_counters[k].bytes[c].load());
    }
    for (int s = 0; s < kSlots; ++s) {
      if (const size_t size = g_counters[k].large_size[s].load()) {
        std::fprintf(f, "size %s %zu %lu\n", kinds[k], size, g_counters[k].large_count[s].load());
      }
    }
  }
  while (g_sites_lock.test_and_set(std::memory_order_acquire)) {
  }
  static Site copy[kSites];
  std::memcpy(static_cast<void*>(copy), g_sites, sizeof(Site) * kSites);
  g_sites_lock.clear(std::memory_order_release);
  for (int i = 0; i < kSites; ++i) {
    if (copy[i].count == 0) continue;
    std::fprintf(f, "site %s %zu %lu", kinds[copy[i].kind], copy[i].size, copy[i].count);
    for (int d = 0; d < copy[i].depth; ++d) {
      Dl_info info;
      if (dladdr(copy[i].frames[d], &info) && info.dli_fname) {
        std::fprintf(f, " %s+0x%lx", info.dli_fname,
                     static_cast<unsigned long>(static_cast<char*>(copy[i].frames[d]) -
                                                static_cast<char*>(info.dli_fbase)));
      } else {
        std::fprintf(f, " ?+%p", copy[i].frames[d]);
      }
    }
    std::fprintf(f, "\n");
  }
  std::fclose(f);
  std::rename(path, final_path);
}

void* DumpLoop(void*) {
  int n = 0;
  for (;;) {
    usleep(20000);
    if (g_dump.exchange(false)) Dump(++n);
  }
  return nullptr;
}

void OnSignal(int) { g_dump.store(true); }

__attribute__((constructor)) void Start() {
  void* warm[2];
  backtrace(warm, 2);  // loads libgcc's unwinder now, not inside a hook
  MallocHook_AddNewHook(&OnNew);
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGUSR2, &sa, nullptr);
  pthread_t thread;
  pthread_create(&thread, nullptr, DumpLoop, nullptr);
  pthread_detach(thread);
}

}  // namespace
