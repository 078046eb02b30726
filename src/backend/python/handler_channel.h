// The channel between the server and one handler process: a Unix stream
// socket pair, one frame each way per batch.
//
// A frame is a 16-byte header [u32 kind][u32 rows][u64 payload_bytes] and its
// payload:
//   server -> worker  kBatch:   the batch's rows as common/handler_rows.h
//                               writes them, each without its padding; the
//                               rows are sent straight from the batch tensor
//                               (writev), no copy in the server.
//   worker -> server  kReady:   the handler initialized (rows 0).
//                     kAnswers: `rows` answers, each one handler row padded
//                               to payload_bytes / rows bytes, read straight
//                               into the output tensor.
//                     kError:   the payload is the error's text (the whole
//                               batch failed: an exception in the handler);
//                               `rows` carries a 4xx code when the handler
//                               raised PredictionException(msg, 4xx), else 500.
// Host byte order: the channel never leaves the machine.
// Thread-safety: one frame at a time per channel; the caller serialises.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace inferd::backend::python {

enum class FrameKind : uint32_t {
  kBatch = 1,
  kReady = 2,
  kAnswers = 3,
  kError = 4,
  kTensors = 5,  // both ways: a tensor model's inputs and outputs (tensor_frame.h)
};

struct FrameHeader {
  FrameKind kind = FrameKind::kBatch;
  uint32_t rows = 0;
  uint64_t payload_bytes = 0;
};
static_assert(sizeof(FrameHeader) == 16);

// Writes the header and the payload pieces in one writev loop. kUnavailable
// when the peer is gone.
Status SendFrame(int fd, const FrameHeader& header, const std::vector<iovec>& payload);

// Called after each kWatchInterval in which a read found nothing to read; a failure it returns ends
// the read with that Status (the pool's memory limit: handler_process.h).
using ReadWatch = std::function<Status()>;
inline constexpr std::chrono::milliseconds kWatchInterval{20};

// Reads exactly `size` bytes into `dst` by `deadline`: kDeadlineExceeded when
// it passes, kUnavailable when the peer closed the socket, or what `watch`
// (when set) returned.
Status ReadExactly(int fd, void* dst, size_t size, TimePoint deadline, const ReadWatch& watch = {});

}  // namespace inferd::backend::python
