#include "pipeline/model_hooks.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/handler_rows.h"
#include "common/tensor_pool.h"
#include "pipeline/image_preprocessor.h"
#include "pipeline/payload.h"
#include "pipeline/postprocessor.h"
#include "pipeline/text_preprocessor.h"

namespace inferd::pipeline {
namespace {

bool IsImageMediaType(const std::string& media) {
  static const char* const kAccepted[] = {
      "",
      "application/octet-stream",
      "application/x-www-form-urlencoded",
      "image/jpeg",
      "image/jpg",
      "image/pjpeg",
      "image/png",
      "image/bmp",
      "image/x-ms-bmp",
      "image/x-bmp",
      "image/webp",
  };
  for (const char* a : kAccepted) {
    if (media == a) return true;
  }
  return false;
}

Status CheckImageMediaType(const std::string& media) {
  if (IsImageMediaType(media)) return Status::Ok();
  if (media.rfind("image/", 0) == 0) {
    return InvalidArgument("unsupported image type '" + media + "': send JPEG, PNG, BMP or WebP");
  }
  return InvalidArgument("unsupported content type '" + media +
                         "' for an image model: send the image bytes (JPEG, PNG, BMP or WebP), "
                         "multipart/form-data or JSON {\"b64\": ...}");
}

Status CheckTextMediaType(const std::string& media, std::string_view content_type) {
  if (media == "text/plain" || media.empty() || media == "application/octet-stream" ||
      media == "application/x-www-form-urlencoded") {
    std::string charset;
    size_t at = content_type.find("charset=");
    if (at != std::string_view::npos) {
      for (char c : content_type.substr(at + 8)) {
        if (c == ';' || c == ' ') break;
        if (c != '"') charset += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    if (!charset.empty() && charset != "utf-8" && charset != "utf8" && charset != "us-ascii") {
      return InvalidArgument("unsupported charset '" + charset + "': send UTF-8 text");
    }
    return Status::Ok();
  }
  return InvalidArgument("unsupported content type '" + media +
                         "' for a text model: send text/plain (UTF-8) or JSON {\"text\": ...}");
}

std::string ItemContext(size_t i, size_t n) { return n > 1 ? "item " + std::to_string(i) : ""; }

using PreprocessHook = std::function<Status(scheduler::InferenceRequest&)>;

// The request's raw payloads, unwrapped (multipart, base64 JSON) and each
// checked by `check` (its media type; an error names the item when there are
// several); `storage` holds the bytes that unwrapping decoded.
using PayloadCheck = Status (*)(const Payload& payload, const scheduler::RawInput& raw);
Status UnwrapItems(const scheduler::InferenceRequest& request, PayloadCheck check,
                   std::vector<std::string>* storage, std::vector<std::string_view>* items) {
  const size_t n = request.raw.size();
  storage->assign(n, std::string());
  items->assign(n, std::string_view());
  for (size_t i = 0; i < n; ++i) {
    auto payload = UnwrapPayload(request.raw[i], &(*storage)[i]);
    Status st = payload.ok() ? check(*payload, request.raw[i]) : payload.status();
    if (!st.ok()) return n > 1 ? st.WithContext(ItemContext(i, n)) : st;
    (*items)[i] = payload->bytes;
  }
  return Status::Ok();
}

Status UnwrapImages(const scheduler::InferenceRequest& request, std::vector<std::string>* storage,
                    std::vector<std::string_view>* images) {
  return UnwrapItems(
      request,
      [](const Payload& p, const scheduler::RawInput&) {
        return CheckImageMediaType(p.media_type);
      },
      storage, images);
}

// Both image hooks: into a tensor of the request's own, and, for an input of
// fixed height and width, into the batch's rows.
Status AddImageHooks(const config::ModelConfig& config, scheduler::ModelHooks* hooks) {
  if (config.inputs.size() != 1) {
    return FailedPrecondition("preprocess (image): the model must have exactly one input, it has " +
                              std::to_string(config.inputs.size()));
  }
  auto created = ImagePreprocessor::Create(config.preprocess, config.inputs.front());
  if (!created.ok()) return FailedPrecondition(created.status().message());
  std::shared_ptr<const ImagePreprocessor> pre = std::move(*created);
  std::string input_name = config.inputs.front().name;
  // The request's image tensor lives until its batch is answered (in the
  // batch, or assembled into it); the pool then takes its bytes back for the
  // next request, on whichever executor runs it.
  auto pool = std::make_shared<TensorPool>();
  hooks->preprocess = [pre, pool, input_name](scheduler::InferenceRequest& request) -> Status {
    std::vector<std::string> storage;
    std::vector<std::string_view> images;
    RETURN_IF_ERROR(UnwrapImages(request, &storage, &images));
    ASSIGN_OR_RETURN(Tensor tensor, pre->Run(images, pool.get()));
    request.inputs.clear();
    request.inputs.push_back({input_name, std::move(tensor)});
    request.raw.clear();
    return Status::Ok();
  };
  if (pre->item_bytes() == 0) return Status::Ok();
  hooks->preprocess_into = [pre](scheduler::InferenceRequest& request, std::byte* dst,
                                 size_t dst_bytes) -> Status {
    std::vector<std::string> storage;
    std::vector<std::string_view> images;
    RETURN_IF_ERROR(UnwrapImages(request, &storage, &images));
    RETURN_IF_ERROR(pre->RunInto(images, dst, dst_bytes));
    request.inputs.clear();
    request.raw.clear();
    return Status::Ok();
  };
  return Status::Ok();
}

StatusOr<PreprocessHook> MakeTextHook(const config::ModelConfig& config,
                                      const std::string& model_dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<TextPreprocessor> created,
                   TextPreprocessor::Create(config, model_dir));
  std::shared_ptr<const TextPreprocessor> pre = std::move(created);
  return PreprocessHook([pre](scheduler::InferenceRequest& request) -> Status {
    std::vector<std::string> storage;
    std::vector<std::string_view> texts;
    RETURN_IF_ERROR(UnwrapItems(
        request,
        [](const Payload& p, const scheduler::RawInput& raw) {
          return CheckTextMediaType(p.media_type, raw.content_type);
        },
        &storage, &texts));
    ASSIGN_OR_RETURN(request.inputs, pre->Run(texts));
    request.raw.clear();
    return Status::Ok();
  });
}

// `preprocess: {kind: bytes}` (a model served by a handler process): each raw
// body becomes one row of the single UINT8 input (common/handler_rows.h), with
// its content type; a multipart form gives its "data" part (or the first
// file), as TorchServe hands a handler the form's field. The bytes are copied
// once here, and once more only when the batch joins several requests.
StatusOr<PreprocessHook> MakeBytesHook(const config::ModelConfig& config) {
  if (config.inputs.size() != 1 || config.inputs.front().dtype != DataType::kUint8 ||
      config.inputs.front().dims.size() != 1 || !config.inputs.front().pad_value) {
    return FailedPrecondition(
        "preprocess (bytes): the model must have one UINT8 input of shape [-1] with a pad_value");
  }
  std::string input_name = config.inputs.front().name;
  return PreprocessHook([input_name](scheduler::InferenceRequest& request) -> Status {
    const size_t n = request.raw.size();
    std::vector<std::string> storage(n);
    std::vector<std::string> types(n);
    std::vector<std::string_view> bodies(n);
    size_t widest = 0;
    for (size_t i = 0; i < n; ++i) {
      const scheduler::RawInput& raw = request.raw[i];
      types[i] = raw.content_type;
      bodies[i] = raw.bytes;
      if (MediaType(raw.content_type) == "multipart/form-data") {
        ASSIGN_OR_RETURN(Payload part, UnwrapPayload(raw, &storage[i]));
        types[i] = part.media_type;
        bodies[i] = part.bytes;
      }
      widest = std::max(widest, HandlerRowSize(types[i], bodies[i].size()));
    }
    Tensor rows = Tensor::Allocate(DataType::kUint8,
                                   {static_cast<int64_t>(n), static_cast<int64_t>(widest)});
    for (size_t i = 0; i < n; ++i) {
      WriteHandlerRow(types[i], bodies[i], rows.mutable_data() + i * widest);
    }
    request.inputs.clear();
    request.inputs.push_back({input_name, std::move(rows)});
    request.raw.clear();
    return Status::Ok();
  });
}

}  // namespace

StatusOr<scheduler::ModelHooks> MakeModelHooks(const config::ModelConfig& config,
                                               const std::string& model_dir) {
  scheduler::ModelHooks hooks;
  switch (config.preprocess.kind) {
    case config::PreprocessKind::kImage:
      RETURN_IF_ERROR(AddImageHooks(config, &hooks));
      break;
    case config::PreprocessKind::kText: {
      ASSIGN_OR_RETURN(hooks.preprocess, MakeTextHook(config, model_dir));
      break;
    }
    case config::PreprocessKind::kBytes: {
      ASSIGN_OR_RETURN(hooks.preprocess, MakeBytesHook(config));
      break;
    }
    case config::PreprocessKind::kNone:
      break;
  }
  if (config.postprocess.kind != config::PostprocessKind::kRaw) {
    auto created = Postprocessor::Create(config, model_dir);
    if (!created.ok()) return created.status();
    std::shared_ptr<const Postprocessor> p = std::move(*created);
    hooks.postprocess = [p](scheduler::InferenceResponse& response) { return p->Run(&response); };
  }
  return GuardHooks(std::move(hooks));
}

namespace {

template <typename... Args>
std::function<Status(Args...)> Guard(std::function<Status(Args...)> hook, const char* step) {
  if (!hook) return hook;
  return [hook = std::move(hook), step](Args... args) -> Status {
    try {
      return hook(args...);
    } catch (const std::bad_alloc&) {
      return Unavailable(std::string(step) + " ran out of memory; retry later");
    } catch (const std::exception& e) {
      return Internal(std::string(step) + " failed: " + e.what());
    } catch (...) {
      return Internal(std::string(step) + " failed with an unknown exception");
    }
  };
}

}  // namespace

scheduler::ModelHooks GuardHooks(scheduler::ModelHooks hooks) {
  hooks.preprocess = Guard(std::move(hooks.preprocess), "preprocessing");
  hooks.preprocess_into = Guard(std::move(hooks.preprocess_into), "preprocessing");
  hooks.postprocess = Guard(std::move(hooks.postprocess), "postprocessing");
  return hooks;
}

}  // namespace inferd::pipeline
