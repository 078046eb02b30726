// The in-process cost of one API key check (docs/performance/api-keys.md):
// an http::AccessGuard over an auth::KeyStore, Check() of an inference route
// with a valid key, on one thread and then on two at once. Built and run by
// tools/auth_check_cost.sh against the libraries of a build folder.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "auth/key_store.h"
#include "http/access_guard.h"

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: auth_check_cost KEYS.yaml KEY\n"), 2;
  auto keys = inferd::auth::KeyStore::Create({argv[1], std::chrono::milliseconds(0)});
  if (!keys.ok()) return std::fprintf(stderr, "%s\n", keys.status().ToString().c_str()), 1;
  const inferd::http::AccessGuard guard(keys->get(), inferd::auth::Kind::kInference);
  const std::string header = std::string("Bearer ") + argv[2];
  constexpr int kCalls = 200000;
  for (int threads : {1, 2}) {
    std::atomic<int> allowed{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (int i = 0; i < kCalls; ++i) {
          allowed += !guard.Check("/v2/models/identity_fp32/infer", header).has_value();
        }
      });
    }
    for (auto& t : pool) t.join();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d thread(s): %d of %d allowed, %.2f us per check (wall, per thread)\n", threads,
                allowed.load(), threads * kCalls, us / kCalls);
  }
}
