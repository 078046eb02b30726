#include "backend/torch/precision_passes.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

namespace inferd::backend {
namespace {

using ::torch::jit::Block;
using ::torch::jit::Graph;
using ::torch::jit::Node;
using ::torch::jit::Value;

// Every node of the graph, nested blocks included, collected first so that
// the caller may change the graph while it goes through them.
void Collect(Block* block, std::vector<Node*>* out) {
  for (Node* n : block->nodes()) {
    out->push_back(n);
    for (Block* b : n->blocks()) Collect(b, out);
  }
}

std::vector<Node*> AllNodes(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> nodes;
  Collect(graph->block(), &nodes);
  return nodes;
}

std::shared_ptr<Graph> ForwardGraph(::torch::jit::Module& module) {
  return module.get_method("forward").graph();
}

// The tensor a prim::Constant node holds, or an undefined tensor.
at::Tensor ConstantTensor(const Node* n) {
  if (n->kind() != c10::prim::Constant || n->outputs().size() != 1 ||
      !n->hasAttribute(c10::attr::value) ||
      n->kindOf(c10::attr::value) != ::torch::jit::AttributeKind::t) {
    return at::Tensor();
  }
  return n->t(c10::attr::value);
}

bool IsLinearWithConstantWeight(const Node* n) {
  if (n->kind() != c10::aten::linear || n->inputs().size() != 3) return false;
  const at::Tensor w = ConstantTensor(n->input(1)->node());
  return w.defined() && w.dim() == 2 && w.is_floating_point();
}

}  // namespace

const CpuPrecisionFeatures& PrecisionFeatures() {
  static const CpuPrecisionFeatures features = [] {
    CpuPrecisionFeatures f;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    std::set<std::string> flags;
    while (std::getline(in, line)) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) flags.insert(w);
      break;
    }
    for (const char* name :
         {"avx512_bf16", "amx_bf16", "avx512_vnni", "avx_vnni", "amx_int8"}) {
      if (flags.count(name)) f.flags += (f.flags.empty() ? "" : " ") + std::string(name);
    }
    f.bf16 = flags.count("avx512_bf16") || flags.count("amx_bf16");
    f.vnni = flags.count("avx512_vnni") || flags.count("avx_vnni") || flags.count("amx_int8");
    const auto& engines = at::globalContext().supportedQEngines();
    f.int8_engine =
        std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) != engines.end();
    return f;
  }();
  return features;
}

int CastFloatConstantsToBf16(::torch::jit::Module& frozen) {
  int cast = 0;
  for (Node* n : AllNodes(ForwardGraph(frozen))) {
    at::Tensor t = ConstantTensor(n);
    if (!t.defined() || !t.is_floating_point() || t.scalar_type() == at::kBFloat16) continue;
    at::Tensor b = t.to(at::kBFloat16);
    if (b.dim() == 4) b = b.contiguous(at::MemoryFormat::ChannelsLast);
    n->t_(c10::attr::value, b);
    n->output()->inferTypeFrom(b);
    ++cast;
  }
  return cast;
}

int TurnOffTransformerFastPaths(::torch::jit::Module& frozen) {
  std::shared_ptr<Graph> graph = ForwardGraph(frozen);
  const auto encoder_layer = c10::Symbol::fromQualString("aten::_transformer_encoder_layer_fwd");
  const auto attention = c10::Symbol::fromQualString("aten::_native_multi_head_attention");
  int removed = 0;
  for (Node* n : AllNodes(graph)) {
    if (n->kind() != encoder_layer && n->kind() != attention) continue;
    Block* branch = n->owningBlock();
    Node* owner = branch->owningNode();
    if (owner == nullptr || owner->kind() != c10::prim::If) continue;
    const bool in_then = owner->blocks()[0] == branch;
    // The condition is also the "returned early" flag that TorchScript's
    // early-return lowering hands to the enclosing blocks: every use of it
    // takes the constant, inserted at the top of the graph so that it
    // dominates them all.
    ::torch::jit::WithInsertPoint top(graph->block()->nodes().front());
    owner->input(0)->replaceAllUsesWith(graph->insertConstant(!in_then));
    ++removed;
  }
  if (removed > 0) {
    ::torch::jit::ConstantPropagation(graph);
    ::torch::jit::EliminateDeadCode(graph);
  }
  return removed;
}

LinearCensus CountConstantLinears(::torch::jit::Module& frozen) {
  LinearCensus census;
  for (Node* n : AllNodes(ForwardGraph(frozen))) {
    const at::Tensor t = ConstantTensor(n);
    if (t.defined() && t.is_floating_point()) census.all_weight_elements += t.numel();
    if (IsLinearWithConstantWeight(n)) {
      ++census.linears;
      census.linear_weight_elements += ConstantTensor(n->input(1)->node()).numel();
    }
  }
  return census;
}

StatusOr<int> QuantizeLinearsDynamic(::torch::jit::Module& frozen) {
  if (!PrecisionFeatures().int8_engine) {
    return FailedPrecondition("this libtorch has no oneDNN quantized engine");
  }
  // Only prepacking reads the engine: the packed weights carry their kernels.
  if (at::globalContext().qEngine() != at::QEngine::ONEDNN) {
    at::globalContext().setQEngine(at::QEngine::ONEDNN);
  }
  static const c10::OperatorHandle prepack =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  const auto linear_dynamic = c10::Symbol::fromQualString("quantized::linear_dynamic");
  std::shared_ptr<Graph> graph = ForwardGraph(frozen);
  int quantized = 0;
  for (Node* n : AllNodes(graph)) {
    if (!IsLinearWithConstantWeight(n)) continue;
    std::optional<c10::IValue> bias_value = ::torch::jit::toIValue(n->input(2));
    if (!bias_value || !(bias_value->isNone() || bias_value->isTensor())) continue;
    c10::optional<at::Tensor> bias;
    if (bias_value->isTensor()) bias = bias_value->toTensor().to(at::kFloat).contiguous();
    const at::Tensor w = ConstantTensor(n->input(1)->node()).to(at::kFloat).contiguous();
    const at::Tensor scales = (w.abs().amax({1}) / 127.0).clamp_min(1e-8).to(at::kDouble);
    const at::Tensor zero_points = at::zeros({w.size(0)}, at::kLong);
    const at::Tensor qw = at::quantize_per_channel(w, scales, zero_points, 0, at::kQInt8);
    ::torch::jit::Stack stack{c10::IValue(qw), c10::IValue(bias)};
    prepack.callBoxed(&stack);
    ::torch::jit::WithInsertPoint here(n);
    Value* packed = graph->insertConstant(stack.at(0));
    Value* no_reduce_range = graph->insertConstant(false);
    Value* out = graph->insert(linear_dynamic, {n->input(0), packed, no_reduce_range});
    n->output()->replaceAllUsesWith(out);
    n->destroy();
    ++quantized;
  }
  if (quantized > 0) ::torch::jit::EliminateDeadCode(graph);
  return quantized;
}

}  // namespace inferd::backend
