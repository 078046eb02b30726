#include "supervisor/listening_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace inferd::supervisor {
namespace {

// A socket bound to `bind`:`port`; listening unless it only reserves the port.
StatusOr<int> BindPort(const std::string& bind, int port, bool listening, const char* role) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, bind.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, bind.c_str(), &v6->sin6_addr) == 1) {
    family = AF_INET6;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in6);
  } else {
    return InvalidArgument("bind address '" + bind + "' is not an IP address");
  }
  const std::string where =
      std::string(role) + " port " + bind + ":" + std::to_string(port);
  // Inherited by the serving process: no CLOEXEC here.
  const int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd < 0) return Unavailable("cannot open the " + where + ": " + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (!listening) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      (listening && ::listen(fd, SOMAXCONN) != 0)) {
    const int err = errno;
    ::close(fd);
    return Unavailable("cannot listen on the " + where + ": " + std::strerror(err));
  }
  return fd;
}

uint16_t LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

StatusOr<ListeningSockets> ListeningSockets::Open(const std::string& bind, int http_port,
                                                  int management_port, int metrics_port,
                                                  int grpc_port) {
  ListeningSockets s;
  struct Want {
    int* fd;
    int port;
    bool listening;
    const char* role;
  } wants[] = {{&s.http_fd, http_port, true, "inference"},
               {&s.management_fd, management_port, true, "management"},
               {&s.metrics_fd, metrics_port, true, "metrics"},
               {&s.grpc_reservation_fd, grpc_port, false, "gRPC"}};
  for (const auto& w : wants) {
    auto fd = BindPort(bind, w.port, w.listening, w.role);
    if (!fd.ok()) {
      s.Close();
      return fd.status();
    }
    *w.fd = *fd;
  }
  s.grpc_port = LocalPort(s.grpc_reservation_fd);
  return s;
}

std::string ListeningSockets::Describe() const {
  return "http=" + std::to_string(http_fd) + ",management=" + std::to_string(management_fd) +
         ",metrics=" + std::to_string(metrics_fd) + ",grpc=" + std::to_string(grpc_port);
}

void ListeningSockets::Close() {
  for (int* fd : {&http_fd, &management_fd, &metrics_fd, &grpc_reservation_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

StatusOr<ServingSockets> ParseServingSockets(const std::string& text) {
  ServingSockets s;
  std::stringstream in(text);
  std::string item;
  int seen = 0;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) break;
    const std::string key = item.substr(0, eq);
    int value = -1;
    try {
      value = std::stoi(item.substr(eq + 1));
    } catch (...) {
      break;
    }
    if (key == "http") s.http_fd = value;
    else if (key == "management") s.management_fd = value;
    else if (key == "metrics") s.metrics_fd = value;
    else if (key == "grpc") s.grpc_port = value;
    else break;
    ++seen;
  }
  if (seen != 4 || s.http_fd < 0 || s.management_fd < 0 || s.metrics_fd < 0 || s.grpc_port <= 0) {
    return InvalidArgument("--serving-sockets '" + text +
                           "' is not http=FD,management=FD,metrics=FD,grpc=PORT (an internal "
                           "flag of the supervisor)");
  }
  return s;
}

}  // namespace inferd::supervisor
