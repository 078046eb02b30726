// A model's config.yaml (config/model_config.h), then the image pre-processor
// built from it when it has one: what a model store hands the server.
#include <string>

#include "config/model_config.h"
#include "fuzz_util.h"
#include "pipeline/image_preprocessor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = inferd::config::ParseModelConfig(text, "fuzz/config.yaml", "fuzz");
  if (!c.ok()) {
    inferd::fuzz::CheckClientError(c.status());
    return 0;
  }
  FUZZ_CHECK(c->max_batch_size >= 1 && c->max_queue_size >= 1 && !c->inputs.empty(), "limits");
  for (const auto* specs : {&c->inputs, &c->outputs}) {
    for (const auto& spec : *specs) {
      for (int64_t d : spec.dims) FUZZ_CHECK(d == -1 || d > 0, "dims");
    }
  }
  if (c->preprocess.kind == inferd::config::PreprocessKind::kImage) {
    auto p = inferd::pipeline::ImagePreprocessor::Create(c->preprocess, c->inputs[0]);
    if (!p.ok()) inferd::fuzz::CheckClientError(p.status());
  }
  return 0;
}
