#include "grpc/internal/unary_call.h"

#include <chrono>

namespace inferd::grpc::internal {

void DrainQueue(QueueThread& queue) {
  void* raw = nullptr;
  bool ok = false;
  while (queue.cq->Next(&raw, &ok)) {
    auto* tag = static_cast<Tag*>(raw);
    // The event's own hold on its call ends with this delivery (after OnEvent).
    std::shared_ptr<CallBase> keep = std::move(tag->keep);
    tag->call->OnEvent(tag->event, ok);
  }
}

serving::Call CallInfoFor(const ::grpc::ServerContext& ctx,
                          std::shared_ptr<std::atomic<bool>> cancelled) {
  serving::Call call;
  call.protocol = serving::Protocol::kGrpc;
  call.received = Clock::Real()->Now();
  gpr_timespec deadline = ctx.raw_deadline();
  if (gpr_time_cmp(deadline, gpr_inf_future(deadline.clock_type)) != 0) {
    gpr_timespec left = gpr_time_sub(gpr_convert_clock_type(deadline, GPR_CLOCK_MONOTONIC),
                                     gpr_now(GPR_CLOCK_MONOTONIC));
    auto ns = std::chrono::seconds(left.tv_sec) + std::chrono::nanoseconds(left.tv_nsec);
    call.deadline = call.received + std::chrono::duration_cast<Duration>(ns);
  }
  call.is_cancelled = [cancelled = std::move(cancelled)] {
    return cancelled->load(std::memory_order_relaxed);
  };
  return call;
}

}  // namespace inferd::grpc::internal
