// Eventually: polls a condition that another thread makes true (a thread
// replaced on its own, a counter bumped by a worker), for up to 10 s.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace inferd::test_support {

inline bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace inferd::test_support
