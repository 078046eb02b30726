#include "pipeline/sentencepiece_tokenizer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

namespace inferd::pipeline {

struct SentencePieceTokenizer::Module {
  // Held around every call into the module in sanitizer builds (see below).
  mutable std::mutex calls;
  void* (*load)(const char*, char*, size_t) = nullptr;
  void (*free)(void*) = nullptr;
  int (*special_id)(void*, int) = nullptr;
  int (*encode)(void*, const char*, size_t, void (*)(void*, const int*, size_t), void*, char*,
                size_t) = nullptr;
};

namespace {

constexpr const char* kModuleName = "libinferd_sentencepiece.so";
// The sanitizers' dlopen interceptor refuses RTLD_DEEPBIND (their runtime
// must see every symbol first). Sanitizer builds therefore load the module,
// built without instrumentation there (src/pipeline/CMakeLists.txt), into a
// link namespace of its own with dlmopen(LM_ID_NEWLM): libsentencepiece and
// its protobuf see only themselves, as with deep binding. That namespace has
// a second libc that does not know the process's threads are running (glibc's
// single-thread fast paths), so every call into it is serialised there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INFERD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INFERD_SANITIZED 1
#endif
#endif
#ifdef INFERD_SANITIZED
constexpr bool kSerialiseCalls = true;
void* OpenModule(const std::string& path) {
  return dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
}
#else
constexpr bool kSerialiseCalls = false;
void* OpenModule(const std::string& path) {
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}
#endif

// A lock on the module's calls where they must be serialised, else none.
std::unique_lock<std::mutex> CallGuard(const SentencePieceTokenizer::Module& module) {
  if (!kSerialiseCalls) return {};
  return std::unique_lock<std::mutex>(module.calls);
}

std::string ExecutableDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// Loads the module once per process; the result (or the error) is kept.
StatusOr<const SentencePieceTokenizer::Module*> LoadModule() {
  static std::once_flag once;
  static SentencePieceTokenizer::Module module;
  static std::string error;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("INFERD_SENTENCEPIECE_MODULE")) candidates.push_back(env);
#ifdef INFERD_SENTENCEPIECE_MODULE_PATH
    candidates.push_back(INFERD_SENTENCEPIECE_MODULE_PATH);
#endif
    candidates.push_back(ExecutableDir() + "/" + kModuleName);
    void* lib = nullptr;
    for (const auto& path : candidates) {
      lib = OpenModule(path);
      if (lib) break;
      error += (error.empty() ? "" : "; ") + std::string(dlerror());
    }
    if (!lib) return;
    module.load = reinterpret_cast<decltype(module.load)>(dlsym(lib, "inferd_spm_load"));
    module.free = reinterpret_cast<decltype(module.free)>(dlsym(lib, "inferd_spm_free"));
    module.special_id =
        reinterpret_cast<decltype(module.special_id)>(dlsym(lib, "inferd_spm_special_id"));
    module.encode = reinterpret_cast<decltype(module.encode)>(dlsym(lib, "inferd_spm_encode"));
    if (!module.load || !module.free || !module.special_id || !module.encode) {
      error = std::string(kModuleName) + " lacks the inferd_spm_* functions";
      module.load = nullptr;
      return;
    }
    error.clear();
  });
  if (!module.load) return FailedPrecondition("SentencePiece is not available: " + error);
  return &module;
}

void CollectIds(void* context, const int* ids, size_t n) {
  static_cast<std::vector<int64_t>*>(context)->assign(ids, ids + n);
}

}  // namespace

StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Create(
    const std::string& model_path) {
  ASSIGN_OR_RETURN(const Module* module, LoadModule());
  char error[512] = {0};
  void* handle = nullptr;
  {
    auto guard = CallGuard(*module);
    handle = module->load(model_path.c_str(), error, sizeof error);
  }
  if (!handle) {
    return FailedPrecondition("preprocess.vocab: cannot load SentencePiece model '" + model_path +
                              "': " + error);
  }
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  t->module_ = module;
  t->handle_ = handle;
  auto guard = CallGuard(*module);
  const int bos = module->special_id(handle, 0), eos = module->special_id(handle, 1);
  const int pad = module->special_id(handle, 2);
  if (bos >= 0) t->bos_ = bos;
  if (eos >= 0) t->eos_ = eos;
  t->pad_ = pad >= 0 ? pad : 0;
  return t;
}

SentencePieceTokenizer::~SentencePieceTokenizer() {
  if (!handle_) return;
  auto guard = CallGuard(*module_);
  module_->free(handle_);
}

StatusOr<std::vector<int64_t>> SentencePieceTokenizer::Tokenize(std::string_view text) const {
  std::u32string unused;
  if (!DecodeUtf8(text, &unused)) return InvalidArgument("text is not valid UTF-8");
  std::vector<int64_t> ids;
  char error[512] = {0};
  auto guard = CallGuard(*module_);
  if (module_->encode(handle_, text.data(), text.size(), CollectIds, &ids, error, sizeof error) !=
      0) {
    return InvalidArgument(std::string("SentencePiece: ") + error);
  }
  return ids;
}

}  // namespace inferd::pipeline
