#include "backend/python/handler_channel.h"

#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

namespace inferd::backend::python {

Status SendFrame(int fd, const FrameHeader& header, const std::vector<iovec>& payload) {
  std::vector<iovec> pieces;
  pieces.reserve(payload.size() + 1);
  pieces.push_back({const_cast<FrameHeader*>(&header), sizeof header});
  pieces.insert(pieces.end(), payload.begin(), payload.end());
  size_t first = 0;
  while (first < pieces.size()) {
    const int count = static_cast<int>(std::min<size_t>(pieces.size() - first, IOV_MAX));
    msghdr msg{};
    msg.msg_iov = pieces.data() + first;
    msg.msg_iovlen = count;
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable(std::string("handler process channel closed: ") + std::strerror(errno));
    }
    size_t left = static_cast<size_t>(n);
    while (first < pieces.size() && left >= pieces[first].iov_len) {
      left -= pieces[first].iov_len;
      ++first;
    }
    if (left > 0) {
      pieces[first].iov_base = static_cast<char*>(pieces[first].iov_base) + left;
      pieces[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

Status ReadExactly(int fd, void* dst, size_t size, TimePoint deadline, const ReadWatch& watch) {
  char* at = static_cast<char*>(dst);
  while (size > 0) {
    ssize_t n = recv(fd, at, size, MSG_DONTWAIT);
    if (n > 0) {
      at += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Unavailable("handler process closed its channel");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Unavailable(std::string("handler process channel: ") + std::strerror(errno));
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return DeadlineExceeded("handler process did not answer in time");
    if (watch) left = std::min(left, kWatchInterval);
    pollfd p{fd, POLLIN, 0};
    const int wait_ms =
        static_cast<int>(std::min<int64_t>(left.count() + 1, std::numeric_limits<int>::max()));
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR) {
      return Unavailable(std::string("handler process channel: ") + std::strerror(errno));
    }
    // Checked only while the worker computes (nothing to read for a whole
    // interval), never per chunk of a large answer.
    if (ready == 0 && watch) RETURN_IF_ERROR(watch());
  }
  return Status::Ok();
}

}  // namespace inferd::backend::python
