// libinferd_sentencepiece.so: a C API around libsentencepiece, loaded by
// SentencePieceTokenizer with dlopen(RTLD_LOCAL | RTLD_DEEPBIND).
//
// Why a separate module: Debian's libsentencepiece carries its own protobuf
// 3.14 runtime and exports its symbols. Linked into inferd next to libtorch's
// libprotobuf 3.21, either copy interposes the other and the process crashes
// in static initialisation or at the first model load. Loaded locally with
// deep binding, libsentencepiece resolves to its own protobuf and the rest of
// the process never sees it. Only the functions below are exported.
#include <sentencepiece_processor.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#define INFERD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void CopyError(const std::string& message, char* error, size_t error_size) {
  if (error_size == 0) return;
  std::strncpy(error, message.c_str(), error_size - 1);
  error[error_size - 1] = '\0';
}

}  // namespace

// Returns a handle, or null with a message in `error`.
INFERD_EXPORT void* inferd_spm_load(const char* path, char* error, size_t error_size) {
  auto* sp = new sentencepiece::SentencePieceProcessor();
  const auto status = sp->Load(path);
  if (!status.ok()) {
    CopyError(status.ToString(), error, error_size);
    delete sp;
    return nullptr;
  }
  return sp;
}

INFERD_EXPORT void inferd_spm_free(void* handle) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(handle);
}

// which: 0 bos, 1 eos, 2 pad, 3 unk. -1 when the model has none.
INFERD_EXPORT int inferd_spm_special_id(void* handle, int which) {
  const auto* sp = static_cast<const sentencepiece::SentencePieceProcessor*>(handle);
  switch (which) {
    case 0:
      return sp->bos_id();
    case 1:
      return sp->eos_id();
    case 2:
      return sp->pad_id();
    case 3:
      return sp->unk_id();
    default:
      return -1;
  }
}

// Encodes `text`; calls `sink(context, ids, n)` once with the ids. Returns 0,
// or -1 with a message in `error`.
INFERD_EXPORT int inferd_spm_encode(void* handle, const char* text, size_t size,
                                    void (*sink)(void*, const int*, size_t), void* context,
                                    char* error, size_t error_size) {
  const auto* sp = static_cast<const sentencepiece::SentencePieceProcessor*>(handle);
  std::vector<int> ids;
  const auto status = sp->Encode(absl::string_view(text, size), &ids);
  if (!status.ok()) {
    CopyError(status.ToString(), error, error_size);
    return -1;
  }
  sink(context, ids.data(), ids.size());
  return 0;
}
