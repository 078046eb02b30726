// The gRPC form of a bench request: an inference.ModelInferRequest built once
// from an input file and kept serialized, so that sending it costs no
// formatting (as for HTTP, see request_set.h).
//
//   --form v2binary  the file's JSON header names the inputs (name, datatype,
//                    shape, parameters.binary_data_size) and the bytes after it
//                    become raw_input_contents, in order; requested outputs
//                    are kept. The answer then comes in raw_output_contents.
//   --form raw       the whole file as one BYTES element of an input named
//                    "input" with shape [1], for models with preprocess:.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "bench/bench_options.h"
#include "common/status.h"

namespace inferd::bench {

// The serialized request for the file `source` with contents `body`.
StatusOr<std::string> PrepareGrpcRequest(const BenchOptions& options, const std::string& source,
                                         std::string_view body);

// The full method name the requests go to.
inline constexpr const char* kModelInferMethod = "/inference.GRPCInferenceService/ModelInfer";

}  // namespace inferd::bench
