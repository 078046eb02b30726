#include "memory/allocator.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace inferd::memory {
namespace {

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double ResidentMb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

// What one forward of a convnet does to the heap: a few multi-megabyte
// activations allocated, written and freed.
void OneForward() {
  std::vector<std::unique_ptr<char[]>> blocks;
  for (size_t mb : {6, 10, 3, 8}) {
    blocks.emplace_back(new char[mb << 20]);
    std::memset(blocks.back().get(), 1, mb << 20);
  }
}

TEST(Allocator, NameIsOneOfTheBuildChoices) {
  const std::string_view name = AllocatorName();
  EXPECT_TRUE(name == "tcmalloc" || name == "jemalloc" || name == "glibc" || name == "system")
      << name;
}

TEST(Allocator, ReusedActivationsDoNotFault) {
  ConfigureAllocator();
  ConfigureAllocator();  // idempotent
  if (AllocatorName() == "system") GTEST_SKIP() << "glibc defaults unmap large blocks on free";
  for (int i = 0; i < 3; ++i) OneForward();
  const long before = MinorFaults();
  for (int i = 0; i < 20; ++i) OneForward();
  // glibc's defaults fault every page of these 27 MB again on each pass
  // (about 6,900 faults per pass).
  EXPECT_LT(MinorFaults() - before, 100);
}

TEST(Allocator, ReleaseFreeMemoryHandsFreedHeapBack) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // make test-asan / test-tsan: the sanitizer's own malloc replaces every
  // allocator of the build and keeps freed blocks (ASan's quarantine).
  GTEST_SKIP() << "a sanitizer's allocator is in use, not the build's";
#endif
  ConfigureAllocator();
  const double start = ResidentMb();
  {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 64; ++i) {
      blocks.emplace_back(new char[2 << 20]);
      std::memset(blocks.back().get(), 1, 2 << 20);
    }
    EXPECT_GT(ResidentMb(), start + 100);
  }
  ReleaseFreeMemory();
  EXPECT_LT(ResidentMb(), start + 40);
}

}  // namespace
}  // namespace inferd::memory
