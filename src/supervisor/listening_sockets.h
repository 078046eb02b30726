// ListeningSockets: the ports of `inferd serve`, opened once by the
// supervisor (supervisor.h) and kept across restarts of the serving process.
//
// The three HTTP ports are listening sockets that the serving process
// inherits (their numbers travel in --serving-sockets) and accepts on: while
// no serving process runs, connections wait in their backlog, and the next
// process accepts them. gRPC 1.51 (Debian's grpc++) cannot adopt a listening
// socket, so its port is only reserved: bound with SO_REUSEPORT and not
// listening, so that the number stays ours (and port 0 resolves once) and the
// serving process binds it again (gRPC sets SO_REUSEPORT); between two
// serving processes gRPC connections are refused and clients reconnect.
//
// Thread-safety: plain values. Ownership: the fds belong to whoever holds the
// struct (Close closes them).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace inferd::supervisor {

struct ListeningSockets {
  int http_fd = -1, management_fd = -1, metrics_fd = -1;
  int grpc_reservation_fd = -1;  // bound, not listening
  uint16_t grpc_port = 0;

  // Opens the four ports on `bind` (port 0 = any free one). Errors:
  // kInvalidArgument (not an IP address), kUnavailable naming the port.
  static StatusOr<ListeningSockets> Open(const std::string& bind, int http_port,
                                         int management_port, int metrics_port, int grpc_port);
  // "http=FD,management=FD,metrics=FD,grpc=PORT": the serving process's flag.
  std::string Describe() const;
  void Close();
};

// What the serving process reads from --serving-sockets.
struct ServingSockets {
  int http_fd = -1, management_fd = -1, metrics_fd = -1;
  int grpc_port = 0;
};
StatusOr<ServingSockets> ParseServingSockets(const std::string& text);

}  // namespace inferd::supervisor
