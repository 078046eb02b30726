// UnaryCall: one unary RPC of the asynchronous (completion-queue) server, from
// its arrival to its answer, holding no thread while it waits.
//
// Each completion queue has exactly one thread; the call's events (its
// arrival, Finish done, the call done or cancelled) are delivered on that
// thread. A handler runs on arrival and answers once with Respond(make), from
// any thread: `make` and Finish run on the caller's thread (the queue thread,
// an executor, the loader thread). gRPC lets any thread start a call's
// operations; answering where the result is handed over costs no thread hop.
// (Against a separate answer thread: ~6k fewer instructions and ~1 fewer
// context switch per trivial call, but on a quiet machine not less CPU time
// nor latency: docs/performance/grpc.md. Sending from the queue thread needs
// a grpc::Alarm to wake it, which goes through gRPC's event-engine thread
// first: ~0.6 ms more per call.)
//
// Ownership: each armed event holds a shared_ptr to its call, and so does
// whoever still has to answer it (a scheduler completion, a posted answer):
// the call lives until all are gone. Once the server closed its gate (Stop),
// nothing new starts: answers that come later are dropped, the calls were
// cancelled by the server's shutdown. Always held by shared_ptr.
#pragma once

#include <grpc/support/time.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "common/clock.h"
#include "serving/call.h"

namespace inferd::grpc::internal {

class CallBase;
enum class Event { kArrived, kFinished, kDone };

// What the completion queue hands back: the call and which of its events.
struct Tag {
  CallBase* call = nullptr;
  Event event = Event::kArrived;
  std::shared_ptr<CallBase> keep;  // set while the event is armed
};

class CallBase {
 public:
  virtual ~CallBase() = default;
  // On the queue's thread, once per armed event.
  virtual void OnEvent(Event event, bool ok) = 0;
};

// Shared by a server's calls: whether new work may still be started on the
// completion queues. Stop closes it before shutting the queues down (gRPC
// forbids new work on a queue being shut down); every Listen, Finish and
// posted answer starts under it, and is skipped once it is closed.
// Thread-safe; starting work takes a shared lock only.
class ServerGate {
 public:
  template <typename F>
  bool RunIfOpen(F&& start) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (closed_) return false;
    start();
    return true;
  }
  bool open() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return !closed_;
  }
  void Close() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    closed_ = true;
  }

 private:
  mutable std::shared_mutex mu_;
  bool closed_ = false;  // guarded by mu_
};

// A completion queue (drained by one thread).
struct QueueThread {
  std::unique_ptr<::grpc::ServerCompletionQueue> cq;
};

// Delivers the queue's events until it is shut down and drained (on the
// calling thread).
void DrainQueue(QueueThread& queue);

// The protocol-neutral view of a call that just arrived (now = its receipt).
serving::Call CallInfoFor(const ::grpc::ServerContext& ctx,
                          std::shared_ptr<std::atomic<bool>> cancelled);

template <typename Service, typename Request, typename Response>
class UnaryCall : public CallBase,
                  public std::enable_shared_from_this<UnaryCall<Service, Request, Response>> {
 public:
  using Make = std::function<::grpc::Status(Response*)>;
  using Handler = std::function<void(const std::shared_ptr<UnaryCall>&)>;
  using RequestMethod = void (Service::*)(::grpc::ServerContext*, Request*,
                                          ::grpc::ServerAsyncResponseWriter<Response>*,
                                          ::grpc::CompletionQueue*, ::grpc::ServerCompletionQueue*,
                                          void*);

  // Where calls of one method arrive: shared by those calls. `owner` keeps the
  // service, the queue and the gate alive (with the grpc::Server) until the
  // last call is gone, even one that a scheduler completion still holds.
  struct Site {
    Service* service;
    RequestMethod method;
    QueueThread* queue;
    ServerGate* gate;
    Handler handler;
    std::shared_ptr<const void> owner;
  };

  // Asks the service for the next call of the site's method; each arrival
  // asks for the one after it.
  static void Listen(std::shared_ptr<const Site> site) {
    auto call = std::shared_ptr<UnaryCall>(new UnaryCall(std::move(site)));
    call->AskForNext();
  }

  const Request& request() const { return *request_; }
  // The request message, to borrow its bytes (raw_input_contents) from.
  std::shared_ptr<const Request> request_owner() const { return request_; }
  const serving::Call& info() const { return info_; }
  const ::grpc::ServerContext& context() const { return ctx_; }

  // Answers the call: `make` fills the response and returns the status to
  // send; both run on the calling thread. Once per call; any thread.
  void Respond(const Make& make) { Finish(make); }

  void OnEvent(Event event, bool ok) override {
    switch (event) {
      case Event::kArrived:
        if (!ok) {  // the server is shutting down: this call never started
          done_.keep.reset();
          return;
        }
        if (!site_->gate->open()) return;  // stopping: the server's shutdown cancels it
        Listen(site_);
        info_ = CallInfoFor(ctx_, cancelled_);
        site_->handler(this->shared_from_this());
        return;
      case Event::kFinished:
        return;
      case Event::kDone:
        if (ctx_.IsCancelled()) cancelled_->store(true, std::memory_order_relaxed);
        return;
    }
  }

 private:
  explicit UnaryCall(std::shared_ptr<const Site> site) : site_(std::move(site)), writer_(&ctx_) {}

  // Builds the response and starts Finish, unless the server has stopped.
  void Finish(const Make& make) {
    finished_.keep = this->shared_from_this();
    bool started = site_->gate->RunIfOpen([&] {
      ::grpc::Status status = make(&response_);
      if (status.ok()) {
        writer_.Finish(response_, status, &finished_);
      } else {
        writer_.FinishWithError(status, &finished_);
      }
    });
    if (!started) finished_.keep.reset();  // the server stopped: the answer is dropped
  }

  void AskForNext() {
    auto self = this->shared_from_this();
    site_->gate->RunIfOpen([&] {
      // Must be armed before the call starts; delivered only if it does.
      done_.keep = self;
      ctx_.AsyncNotifyWhenDone(&done_);
      arrived_.keep = self;
      ::grpc::ServerCompletionQueue* cq = site_->queue->cq.get();
      (site_->service->*site_->method)(&ctx_, request_.get(), &writer_, cq, cq, &arrived_);
    });
  }

  std::shared_ptr<const Site> site_;  // first: destroyed last
  ::grpc::ServerContext ctx_;
  std::shared_ptr<Request> request_ = std::make_shared<Request>();
  Response response_;
  ::grpc::ServerAsyncResponseWriter<Response> writer_;
  serving::Call info_;
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  Tag arrived_{this, Event::kArrived, nullptr};
  Tag finished_{this, Event::kFinished, nullptr};
  Tag done_{this, Event::kDone, nullptr};
};

}  // namespace inferd::grpc::internal
