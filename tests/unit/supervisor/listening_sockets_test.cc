#include "supervisor/listening_sockets.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/exit_cause.h"

namespace inferd::supervisor {
namespace {

int ConnectTo(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::close(fd);
  return rc;
}

uint16_t PortOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

TEST(ListeningSocketsTest, HttpPortsListenAndTheGrpcPortIsOnlyReserved) {
  auto s = ListeningSockets::Open("127.0.0.1", 0, 0, 0, 0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_GT(s->grpc_port, 0);
  // Nobody accepts: the connection waits in the backlog, it is not refused.
  EXPECT_EQ(ConnectTo(PortOf(s->http_fd)), 0);
  EXPECT_NE(ConnectTo(s->grpc_port), 0);  // bound, not listening
  // The serving process can bind the reserved port (gRPC sets SO_REUSEPORT).
  const int grpc = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(grpc, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(s->grpc_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(grpc, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::listen(grpc, 4), 0);
  EXPECT_EQ(ConnectTo(s->grpc_port), 0);
  ::close(grpc);

  auto parsed = ParseServingSockets(s->Describe());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->http_fd, s->http_fd);
  EXPECT_EQ(parsed->management_fd, s->management_fd);
  EXPECT_EQ(parsed->metrics_fd, s->metrics_fd);
  EXPECT_EQ(parsed->grpc_port, s->grpc_port);
  s->Close();
  EXPECT_EQ(s->http_fd, -1);
}

TEST(ListeningSocketsTest, ErrorsNameThePort) {
  auto first = ListeningSockets::Open("127.0.0.1", 0, 0, 0, 0);
  ASSERT_TRUE(first.ok());
  auto taken = ListeningSockets::Open("127.0.0.1", PortOf(first->http_fd), 0, 0, 0);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("cannot listen on the inference port"),
            std::string::npos)
      << taken.status().message();
  auto bad = ListeningSockets::Open("not-an-ip", 0, 0, 0, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  first->Close();
  for (const char* text : {"", "http=3", "http=3,management=4,metrics=5,grpc=0",
                           "http=x,management=4,metrics=5,grpc=8001",
                           "http=3,management=4,metrics=5,other=8001"}) {
    EXPECT_FALSE(ParseServingSockets(text).ok()) << text;
  }
}

TEST(ExitCauseTest, NamesTheSignalOrTheCode) {
  int status = 0;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::raise(SIGKILL);
    ::_exit(0);
  }
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(DescribeExit(status), "signal 9 (SIGKILL)");
  pid = ::fork();
  if (pid == 0) ::_exit(3);
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(DescribeExit(status), "exit code 3");
}

}  // namespace
}  // namespace inferd::supervisor
