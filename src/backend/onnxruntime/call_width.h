// The intra-op width the scheduler gave the calling executor thread for its
// next ONNX Runtime calls (Backend::SetCallWidth): OnnxBackend sets it,
// OnnxModel::Execute reads it to choose its session. 1 until set.
// Thread-safety: one value per thread.
#pragma once

namespace inferd::backend {

inline int& CallThreads() {
  thread_local int threads = 1;
  return threads;
}

}  // namespace inferd::backend
