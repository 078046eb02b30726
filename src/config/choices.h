// The choice fields of a model's config.yaml as enums, parsed once by
// ModelConfig's parser: code downstream switches on them and never compares
// strings again. Each enum has its config spelling (Name) and a parser that
// knows every spelling (ParseChoice), so that the parser, error messages and
// the reference in docs/CONFIG.md cannot drift apart.
// Plain values; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferd::config {

// `backend:` which runtime loads the model (backend/registry.h).
enum class BackendKind { kTorchscript, kOnnxruntime, kXgboost, kPython };
// `precision:` the arithmetic the backend runs in.
enum class Precision { kFp32, kBf16, kInt8, kAuto };
// `variants:` auto: verify and time the execution variants, serve the fastest
// correct one; else one variant by name (still verified).
enum class Variants { kAuto, kFrozen, kChannelsLast, kOptimizeForInference };
// `load:` kServerDefault: the server's --lazy-load flag decides.
enum class LoadChoice { kServerDefault, kEager, kLazy };
// `isolation:` kThread: the model runs on executor threads inside the server;
// kProcess: in a sandboxed worker process (backend/python/), so that a crash in
// its forward costs only its batch.
enum class Isolation { kThread, kProcess };
// `preprocess.kind:` kNone: requests carry tensors.
enum class PreprocessKind { kNone, kImage, kText, kBytes };
// `preprocess.color:` the channel order (or single channel) the model wants.
enum class ColorOrder { kRgb, kBgr, kGrayscale };
// `preprocess.tokenizer:`
enum class Tokenizer { kWordpiece, kSentencepiece };
// `postprocess.kind:` kRaw: the output tensors as the model gives them.
enum class PostprocessKind { kRaw, kTopk, kArgmax, kSoftmax, kSigmoid };

std::string_view Name(BackendKind v);
std::string_view Name(Precision v);
std::string_view Name(Variants v);
std::string_view Name(LoadChoice v);  // "" for kServerDefault
std::string_view Name(Isolation v);
std::string_view Name(PreprocessKind v);  // "" for kNone
std::string_view Name(ColorOrder v);
std::string_view Name(Tokenizer v);
std::string_view Name(PostprocessKind v);

// The value spelled `text`, if any (the spellings of Name, plus `raw` for
// PostprocessKind::kRaw). T is one of the enums above.
template <typename T>
std::optional<T> ParseChoice(std::string_view text);

// The accepted spellings for an error message: "a, b or c".
template <typename T>
std::string ChoiceList();

}  // namespace inferd::config
