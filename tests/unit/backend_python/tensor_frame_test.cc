// Tensor frames (backend/python/tensor_frame.h) through a real socket pair:
// what is sent is what is read back, dtype, shape and bytes; a frame that
// lies about its sizes is refused, never read past.
#include "backend/python/tensor_frame.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace inferd::backend::python {
namespace {

struct SocketPair {
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~SocketPair() {
    close(fds[0]);
    close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

TimePoint Later() { return std::chrono::steady_clock::now() + std::chrono::seconds(30); }

TEST(TensorFrame, RoundTripsDtypesShapesAndBytes) {
  Tensor a = Tensor::Allocate(DataType::kFp32, {2, 3});
  for (int i = 0; i < 6; ++i) a.mutable_data_as<float>()[i] = 0.5f * static_cast<float>(i);
  Tensor b = Tensor::Allocate(DataType::kInt64, {4});
  for (int i = 0; i < 4; ++i) b.mutable_data_as<int64_t>()[i] = -i;
  Tensor empty = Tensor::Allocate(DataType::kUint8, {0, 5});
  std::vector<NamedTensor> in = {{"a", a}, {"b", b}, {"e", empty}};
  std::string heads;
  auto payload = TensorPayload(in, &heads);
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  uint64_t total = 0;
  for (const iovec& piece : *payload) total += piece.iov_len;
  SocketPair s;
  ASSERT_TRUE(SendFrame(s.fds[0], {FrameKind::kTensors, 3, total}, *payload).ok());
  FrameHeader header;
  ASSERT_TRUE(ReadExactly(s.fds[1], &header, sizeof header, Later()).ok());
  EXPECT_EQ(header.kind, FrameKind::kTensors);
  auto out = ReadTensors(s.fds[1], header.rows, header.payload_bytes, Later(), {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*out)[i].dtype(), in[i].tensor.dtype());
    EXPECT_EQ((*out)[i].shape(), in[i].tensor.shape());
    ASSERT_EQ((*out)[i].byte_size(), in[i].tensor.byte_size());
    if (in[i].tensor.byte_size() == 0) continue;  // no data: memcmp takes no null pointer
    EXPECT_EQ(std::memcmp((*out)[i].data(), in[i].tensor.data(), in[i].tensor.byte_size()), 0);
  }
}

TEST(TensorFrame, RefusesBytesTensorsAndFramesThatLie) {
  std::string heads;
  Tensor text = Tensor::Allocate(DataType::kBytes, {1});
  auto refused = TensorPayload({{"text", text}}, &heads);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("isolation: process"), std::string::npos);

  // A head that says 1 GiB of FP32 in a frame of 64 bytes: refused unread.
  SocketPair s;
  TensorHead head{static_cast<uint32_t>(DataType::kFp32), 1, uint64_t{1} << 30};
  const int64_t dim = int64_t{1} << 28;
  std::string bytes(sizeof head + sizeof dim, '\0');
  std::memcpy(bytes.data(), &head, sizeof head);
  std::memcpy(bytes.data() + sizeof head, &dim, sizeof dim);
  ASSERT_EQ(write(s.fds[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  auto out = ReadTensors(s.fds[1], 1, 64, Later(), {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_NE(out.status().message().find("malformed tensor frame"), std::string::npos);
}

}  // namespace
}  // namespace inferd::backend::python
