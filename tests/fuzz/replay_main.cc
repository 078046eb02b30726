// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput without
// libFuzzer: the normal (g++) test run uses it to replay every committed corpus
// and crash file as a regression test. Arguments are files or directories
// (every regular file inside, sorted). Exits 0 after replaying at least one
// input; a crash, a sanitizer report or a failed FUZZ_CHECK fails the test.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

// The input being replayed, named when the process dies on it.
char current[4096];

void NameCurrent() {
  const char prefix[] = "\nreplay: failed on ";
  (void)!write(2, prefix, sizeof prefix - 1);
  (void)!write(2, current, std::strlen(current));
  (void)!write(2, "\n", 1);
}

void OnSignal(int sig) {
  NameCurrent();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnSignal);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NameCurrent);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::snprintf(current, sizeof current, "%s", f.c_str());
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return files.empty() ? 1 : 0;
}
