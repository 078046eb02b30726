// What makes a version's candidates up to date: the stamp kept in its
// optimize.json. `inferd optimize` makes nothing again while the stamp it
// computes now equals the report's and the report's files are all there.
//
// The stamp names model.pt's SHA-256, the export script's SHA-256 (a new
// export or int8 rewrite makes the candidates again), the tensors the config
// declares (names, datatypes, dims: the export's input names and dynamic
// axes come from them) and the report format. Changes elsewhere in the config
// (batching, precision) leave the candidates as they are.
// Free functions; any thread.
#pragma once

#include <string>

#include "common/status.h"
#include "config/model_config.h"

namespace inferd::optimize {

// The SHA-256 of a file's bytes, as 64 lowercase hex digits; kInvalidArgument
// naming the file when it cannot be read.
StatusOr<std::string> Sha256File(const std::string& path);

// The config's part of the stamp: each input and output as
// "name:DATATYPE[dims]", inputs then outputs, and the preprocess kind.
std::string TensorSignature(const config::ModelConfig& config);

std::string MakeStamp(const std::string& model_digest, const std::string& script_digest,
                      const config::ModelConfig& config);

}  // namespace inferd::optimize
