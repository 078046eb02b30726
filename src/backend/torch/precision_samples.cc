#include "backend/torch/precision_samples.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "backend/torch/execution_variants.h"
#include "backend/torch/tensor_conversion.h"
#include "common/text_format.h"

namespace inferd::backend {
namespace {

namespace fs = std::filesystem;

// Ops an id tensor may pass through on its way to an embedding unchanged.
bool PassesIdsOn(c10::Symbol kind) {
  static const c10::Symbol kinds[] = {c10::aten::to,      c10::aten::slice, c10::aten::contiguous,
                                      c10::aten::view,    c10::aten::reshape,
                                      c10::aten::select,  c10::aten::flatten};
  return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds);
}

// The rows of the smallest embedding table `input` indexes (0: none).
int64_t EmbeddingRows(::torch::jit::Value* input) {
  int64_t rows = 0;
  std::vector<std::pair<::torch::jit::Value*, int>> frontier{{input, 0}};
  while (!frontier.empty()) {
    auto [value, depth] = frontier.back();
    frontier.pop_back();
    for (const ::torch::jit::Use& use : value->uses()) {
      ::torch::jit::Node* n = use.user;
      if (n->kind() == c10::aten::embedding && use.offset == 1) {
        ::torch::jit::Node* w = n->input(0)->node();
        if (w->kind() == c10::prim::Constant && w->hasAttribute(c10::attr::value) &&
            w->kindOf(c10::attr::value) == ::torch::jit::AttributeKind::t) {
          const int64_t r = w->t(c10::attr::value).size(0);
          rows = rows == 0 ? r : std::min(rows, r);
        }
      } else if (depth < 4 && PassesIdsOn(n->kind())) {
        for (::torch::jit::Value* out : n->outputs()) frontier.push_back({out, depth + 1});
      }
    }
  }
  return rows;
}

// Splits per-input tensors of `items` items into batches of at most `batch`.
void AddBatches(const std::vector<at::Tensor>& inputs, int64_t items, int64_t batch,
                SampleSet* set) {
  for (int64_t start = 0; start < items; start += batch) {
    const int64_t n = std::min(batch, items - start);
    std::vector<at::Tensor> b;
    for (const at::Tensor& t : inputs) b.push_back(t.narrow(0, start, n).contiguous());
    set->batches.push_back(std::move(b));
  }
  set->items += static_cast<int>(items);
}

StatusOr<SampleSet> Draw(const config::ModelConfig& config, ::torch::jit::Module& frozen,
                         int drawn, int64_t batch) {
  SampleSet set;
  const bool text = config.preprocess.kind == config::PreprocessKind::kText;
  std::vector<at::Tensor> inputs =
      MakeInputs(config, drawn, text ? std::min(config.preprocess.max_length, 32) : 1);
  if (inputs.empty() || config.inputs.empty()) return set;
  const auto graph = frozen.get_method("forward").graph();
  auto generator = at::detail::createCPUGenerator(/*seed_in=*/20261203);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (at::isFloatingType(inputs[i].scalar_type())) continue;
    int64_t rows = 0;
    if (graph->inputs().size() == config.inputs.size() + 1) {  // inputs()[0] is self
      rows = EmbeddingRows(graph->inputs()[i + 1]);
    }
    inputs[i] = rows > 0 ? at::randint(0, rows, inputs[i].sizes(), generator,
                                       at::TensorOptions().dtype(inputs[i].scalar_type()))
                         : at::ones_like(inputs[i]);
  }
  set.source = "drawn for the declared shapes";
  AddBatches(inputs, drawn, batch, &set);
  return set;
}

// One sample file's tensors in config input order.
StatusOr<std::vector<at::Tensor>> ReadSampleFile(const config::ModelConfig& config,
                                                 const fs::path& path, int64_t* items) {
  const std::string where = "samples/" + path.filename().string();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = ::torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    return InvalidArgument(where + ": not a file written by torch.save: " +
                           std::string(e.what()).substr(0, 300));
  }
  const size_t n = config.inputs.size();
  std::vector<c10::IValue> found(n);
  if (value.isTensor() && n == 1) {
    found[0] = value;
  } else if ((value.isTuple() || value.isList())) {
    std::vector<c10::IValue> list;
    if (value.isTuple()) {
      for (const auto& v : value.toTupleRef().elements()) list.push_back(v);
    } else {
      for (const auto& v : value.toListRef()) list.push_back(v);
    }
    if (list.size() != n) {
      return InvalidArgument(where + ": holds " + std::to_string(list.size()) +
                             " tensors; the config lists " + std::to_string(n) + " inputs");
    }
    found = list;
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      for (size_t i = 0; i < n; ++i) {
        if (entry.key().isString() && entry.key().toStringRef() == config.inputs[i].name) {
          found[i] = entry.value();
        }
      }
    }
  } else {
    return InvalidArgument(where + ": expected a tensor, a list of tensors or a dict by input "
                                   "name, got a " + std::string(value.tagKind()));
  }
  std::vector<at::Tensor> out;
  *items = -1;
  for (size_t i = 0; i < n; ++i) {
    const config::TensorSpec& spec = config.inputs[i];
    const std::string what = where + ": input " + Quoted(spec.name);
    if (!found[i].isTensor()) return InvalidArgument(what + " is missing or not a tensor");
    at::Tensor t = found[i].toTensor();
    const auto dtype = ToTorchDtype(spec.dtype);
    if (!dtype || t.scalar_type() != *dtype) {
      return InvalidArgument(what + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                             "; the config says " + std::string(DataTypeName(spec.dtype)));
    }
    const int64_t rank = static_cast<int64_t>(spec.dims.size());
    if (t.dim() == rank) t = t.unsqueeze(0);
    bool fits = t.dim() == rank + 1;
    for (int64_t d = 0; fits && d < rank; ++d) {
      fits = spec.dims[d] < 0 || spec.dims[d] == t.size(d + 1);
    }
    if (!fits) {
      return InvalidArgument(what + " has shape " + c10::str(t.sizes()) +
                             ", which is neither one item nor a batch of the config's dims");
    }
    if (*items >= 0 && t.size(0) != *items) {
      return InvalidArgument(where + ": its inputs hold different numbers of items");
    }
    *items = t.size(0);
    out.push_back(t);
  }
  return out;
}

}  // namespace

StatusOr<SampleSet> MakeSamples(const config::ModelConfig& config, const std::string& model_dir,
                                ::torch::jit::Module& frozen, int drawn, int64_t batch) {
  const fs::path dir = fs::path(model_dir) / "samples";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Draw(config, frozen, drawn, batch);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  if (ec) return InvalidArgument(dir.string() + ": cannot list: " + ec.message());
  if (files.empty()) return InvalidArgument(dir.string() + " holds no .pt sample files");
  std::sort(files.begin(), files.end());
  SampleSet set;
  for (const fs::path& path : files) {
    int64_t items = 0;
    ASSIGN_OR_RETURN(std::vector<at::Tensor> inputs, ReadSampleFile(config, path, &items));
    AddBatches(inputs, items, batch, &set);
  }
  set.source = "samples/ (" + std::to_string(files.size()) + " files)";
  return set;
}

}  // namespace inferd::backend
