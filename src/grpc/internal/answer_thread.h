// AnswerThread: the network thread that sends gRPC answers computed on the
// executors, so that encoding and the socket write (and the kernel's loopback
// work behind it) run outside the executors' pinned cores, as HTTP's answers
// run on the connection's thread.
//
// Why not send from the completion-queue thread: it sleeps in
// CompletionQueue::Next, and gRPC's one way to wake it from another thread, a
// grpc::Alarm, goes through gRPC's event-engine thread first (two wake-ups;
// about 0.6 ms per call on this machine). A plain queue and condition
// variable cost one wake-up, like Boost.Asio's post for HTTP.
// Thread-safety: Post from any thread. Stop joins; later posts are dropped.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace inferd::grpc::internal {

class AnswerThread {
 public:
  AnswerThread();
  ~AnswerThread() { Stop(); }

  // Runs `answer` on the thread; false (and `answer` dropped) once stopped.
  bool Post(std::function<void()> answer);
  // Runs what is queued, then ends the thread.
  void Stop();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::thread thread_;
};

}  // namespace inferd::grpc::internal
