// bench_forward_journal: the crash journal's cost per forward (one Begin and
// one End through a ForwardMark, as BatchRunner calls them), in ns, against
// the same loop without a journal; on 1 thread and on N at once (each its own
// slot: no shared cache line).
//   bench_forward_journal [--iterations N] [--threads N] [--path FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "journal/forward_journal.h"

namespace {

using inferd::journal::ForwardMark;

// ns per Begin+End pair; the empty mark costs the branch only.
double NsPerForward(const ForwardMark& mark, long iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) {
    mark.Begin();
    asm volatile("" ::: "memory");  // the forward: nothing the compiler may move across
    mark.End();
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iterations);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 50'000'000;
  int threads = 2;
  std::string path = "/tmp/bench-forward-journal";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) iterations = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--path")) path = argv[i + 1];
  }
  auto journal = inferd::journal::ForwardJournal::Create(path);
  if (!journal.ok()) {
    std::fprintf(stderr, "%s\n", journal.status().message().c_str());
    return 1;
  }
  const ForwardMark none;
  const ForwardMark mark{journal->get(), (*journal)->Register("bench", 1)};
  std::vector<double> base, marked;
  for (int round = 0; round < 5; ++round) {
    base.push_back(NsPerForward(none, iterations));
    marked.push_back(NsPerForward(mark, iterations));
  }
  std::printf("1 thread: %.2f ns per forward marked, %.2f ns without a journal (medians of 5 x %ld)\n",
              Median(marked), Median(base), iterations);
  std::vector<double> per_thread(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { per_thread[static_cast<size_t>(t)] = NsPerForward(mark, iterations); });
  }
  for (auto& t : pool) t.join();
  std::printf("%d threads at once: %.2f ns per forward marked (median of the threads)\n", threads,
              Median(per_thread));
  std::remove(path.c_str());
  return 0;
}
