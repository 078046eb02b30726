// The inputs `inferd optimize` runs the TorchScript reference and every
// candidate on (docs/OPTIMIZE.md): each sample alone (batch 1), then the
// samples together in batches of at most max_batch_size, so that a candidate
// whose batch axis or variable dims were baked in at export fails here.
//
// Where they come from, first that applies:
//   - an image model (`preprocess: {kind: image}`) with image files in
//     DIR/<model>/samples/ (PNG, JPEG, BMP; at most 8, in name order): the
//     server's own pre-processing (pipeline::ImagePreprocessor);
//   - a text model (`preprocess: {kind: text}`): the texts of
//     DIR/<model>/samples/*.txt (one text a file; at most 8), else four
//     built-in texts of 2 to 30 words, through the config's tokenizer
//     (pipeline::TextPreprocessor; a batch is padded to its longest text);
//   - else `drawn` items for the declared shapes, seeded: images as uniform
//     pixels normalized by the config's mean/std, other floats standard
//     normal, integers and BOOL ones (a valid token id, segment and mask),
//     -1 dims as 8. BYTES inputs cannot be drawn (kInvalidArgument).
// Pure apart from reading the sample files; any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "config/model_config.h"

namespace inferd::optimize {

struct SampleRun {
  std::vector<NamedTensor> inputs;  // in the config's order, batch dim first
  int items = 0;
  bool alone = false;  // one sample by itself (top-1 agreement is counted on these)
};

struct ComparisonSamples {
  std::vector<SampleRun> runs;  // every sample alone, then the batches
  int samples = 0;
  std::string source;  // "images in samples/", "built-in texts", "drawn for the declared shapes"
};

StatusOr<ComparisonSamples> MakeComparisonSamples(const config::ModelConfig& config,
                                                  const std::string& model_dir, int drawn = 4);

}  // namespace inferd::optimize
