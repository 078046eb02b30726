// Graph passes that make the reduced-precision candidates of a frozen
// TorchScript module (precision_choice.h checks them against fp32), and the
// CPU features that say which candidates are worth building.
//
//  - bf16: every floating constant of the frozen graph (the weights, with
//    batch norm already folded into the convolutions in fp32 by freeze) is
//    cast to bf16; 4-D ones are stored channels-last, the layout oneDNN's bf16
//    convolutions run fastest in. The caller casts floating inputs to bf16
//    (4-D ones channels-last) and the outputs back. Measured on ResNet-50, one
//    thread, batch 4 (AVX512_BF16, no AMX): 46.6 ms an item against 59.3 with
//    NCHW bf16 weights and 96.8 for fp32 optimize_for_inference; errors
//    4.1e-3 / 4.5e-3 of the largest output. Unlike CPU autocast, nothing is
//    re-cast per call and nn.TransformerEncoder's fused fast path runs (whole
//    in bf16) instead of failing on mixed dtypes.
//  - int8: dynamic quantization of the linear layers, as Python's
//    torch.ao.quantization.quantize_dynamic does for nn.Linear, done on the
//    graph because libtorch 1.13 offers it only from Python: each aten::linear
//    whose weight is a constant becomes quantized::linear_dynamic on weights
//    quantized per output channel (symmetric qint8, prepacked once with the
//    bias by quantized::linear_prepack); activations are quantized per call
//    (per tensor, range taken from the batch). Convolutions stay fp32: libtorch
//    1.13 has no dynamic quantization for them, and static int8 would need
//    calibrated activation ranges. nn.TransformerEncoder's and
//    nn.MultiheadAttention's fused fast paths take their weights whole, so
//    they are turned off first (TurnOffTransformerFastPaths) and the layers
//    run their aten::linear path.
//
// All passes mutate the module's own graph: give them a frozen copy that has
// never run (a graph executor caches its plan on the first call) and that
// shares no compilation unit with the served module.
// Thread-compatible: one module per call; the CPU features are read once.
#pragma once

#include <string>

#include <torch/script.h>

#include "common/status.h"

namespace inferd::backend {

struct CpuPrecisionFeatures {
  bool bf16 = false;       // avx512_bf16 or amx_bf16: native bf16 dot products
  bool vnni = false;       // avx512_vnni, avx_vnni or amx_int8: int8 dot products
  bool int8_engine = false;  // libtorch has the oneDNN quantized engine
  std::string flags;       // the features found, for the log ("avx512_bf16 avx512_vnni")
};
// /proc/cpuinfo's flags and libtorch's quantized engines, read once.
const CpuPrecisionFeatures& PrecisionFeatures();

// Number of constants cast.
int CastFloatConstantsToBf16(::torch::jit::Module& frozen);

// The fused fast-path calls (aten::_transformer_encoder_layer_fwd,
// aten::_native_multi_head_attention) each sit in one branch of the prim::If
// that checks whether it may run: the condition (and every other use of it,
// such as the early-return flag) becomes the constant that takes the other
// branch (the layer's op-by-op path), and constant propagation drops the
// fast path. Returns the number of fast paths removed.
int TurnOffTransformerFastPaths(::torch::jit::Module& frozen);

// Linear layers in the graph: those whose weight is a constant, and their
// weight elements (to judge whether int8 can matter: `all_weight_elements`
// counts every floating constant).
struct LinearCensus {
  int linears = 0;
  int64_t linear_weight_elements = 0;
  int64_t all_weight_elements = 0;
};
LinearCensus CountConstantLinears(::torch::jit::Module& frozen);

// Replaces every aten::linear with a constant 2-D weight; returns how many.
// kFailedPrecondition when libtorch lacks the oneDNN quantized engine.
StatusOr<int> QuantizeLinearsDynamic(::torch::jit::Module& frozen);

}  // namespace inferd::backend
