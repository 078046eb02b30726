// The sample inputs the precision guard (precision_choice.h) runs every
// candidate on: a model's own `samples/` folder, else inputs drawn for the
// declared shapes and dtypes.
//
// DIR/<model>/samples/*.pt (in name order), each written by torch.save: a
// tensor (one-input models), a list or tuple in the config's input order, or a
// dict by input name. Each tensor is one item (the config's dims) or a batch of
// items (a leading dim); its datatype must be the config's. Drawn: `drawn`
// items (seeded, execution_variants.h's MakeInputs), the -1 dims of a text
// model as min(max_length, 32) tokens and 1 otherwise; an integer input that
// feeds an aten::embedding gets ids drawn below the smallest such table's rows
// (within the vocabulary), other integer inputs ones (masks).
// Thread-compatible; torch headers: include from src/backend/torch/ only.
#pragma once

#include <string>
#include <vector>

#include <torch/script.h>

#include "common/status.h"
#include "config/model_config.h"

namespace inferd::backend {

struct SampleSet {
  // Each batch: one tensor per config input, batch dim first, at most the
  // batch size asked for (the items of one file batch together).
  std::vector<std::vector<at::Tensor>> batches;
  int items = 0;
  std::string source;  // "samples/ (3 files)" | "drawn for the declared shapes"
};

// `frozen`: the fp32 frozen module (its graph tells which inputs feed an
// embedding). An empty set when inputs cannot be drawn (BYTES, none listed);
// kInvalidArgument naming the file when a sample is unreadable or malformed.
StatusOr<SampleSet> MakeSamples(const config::ModelConfig& config, const std::string& model_dir,
                                ::torch::jit::Module& frozen, int drawn, int64_t batch);

}  // namespace inferd::backend
