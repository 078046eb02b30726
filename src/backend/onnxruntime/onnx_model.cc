#include "backend/onnxruntime/onnx_model.h"

#include <onnxruntime_cxx_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "backend/model_file.h"
#include "backend/onnxruntime/call_width.h"
#include "common/text_format.h"

namespace inferd::backend {
namespace {

std::optional<ONNXTensorElementDataType> ToOnnx(DataType t) {
  switch (t) {
    case DataType::kBool:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case DataType::kUint8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case DataType::kInt8:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case DataType::kInt16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case DataType::kInt32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case DataType::kInt64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case DataType::kFp16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case DataType::kBf16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    case DataType::kFp32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case DataType::kFp64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case DataType::kBytes:
      return std::nullopt;  // ONNX strings are not laid out as BYTES
  }
  return std::nullopt;
}

std::optional<DataType> FromOnnx(ONNXTensorElementDataType t) {
  for (DataType d :
       {DataType::kBool, DataType::kUint8, DataType::kInt8, DataType::kInt16, DataType::kInt32,
        DataType::kInt64, DataType::kFp16, DataType::kBf16, DataType::kFp32, DataType::kFp64}) {
    if (ToOnnx(d) == t) return d;
  }
  return std::nullopt;
}

}  // namespace

struct OnnxModel::Graph {
  std::shared_ptr<void> env;  // Ort::Env: outlives the sessions
  // The weights ONNX Runtime lays out for its kernels, shared by both
  // sessions: the wide one adds its graph and pool, not a copy of them.
  std::unique_ptr<Ort::PrepackedWeightsContainer> prepacked;
  std::unique_ptr<Ort::Session> session;
  // Intra-op pool of `wide_threads` for a lone request (call_width.h); null
  // when the model has no wider width to run on.
  std::unique_ptr<Ort::Session> wide;
  int wide_threads = 0;
  Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  std::vector<std::string> input_names;   // graph order
  std::vector<size_t> input_slot;         // graph input i = config input input_slot[i]
  std::vector<std::string> output_names;  // the graph outputs run, in answer order
  std::vector<std::string> answer_names;  // what they are called in the answer
  std::vector<const char*> input_ptrs, output_ptrs;
};

OnnxModel::OnnxModel(std::unique_ptr<Graph> graph, config::ModelConfig config, int64_t file_bytes)
    : graph_(std::move(graph)), config_(std::move(config)), file_bytes_(file_bytes) {}

OnnxModel::~OnnxModel() = default;

StatusOr<std::shared_ptr<OnnxModel>> OnnxModel::Load(const LoadOptions& load,
                                                     const Options& options) {
  const config::ModelConfig& c = load.config;
  const std::string& path = load.model_path;
  const std::string where = "model " + Quoted(c.name) + ": ";
  ASSIGN_OR_RETURN(const int64_t file_bytes, ModelFileBytes(load));
  const auto start = std::chrono::steady_clock::now();
  auto graph = std::make_unique<Graph>();
  graph->env = options.env;
  try {
    const auto session_options = [](int threads) {
      Ort::SessionOptions so;
      so.SetIntraOpNumThreads(std::max(1, threads));
      so.SetInterOpNumThreads(1);
      so.SetExecutionMode(ORT_SEQUENTIAL);
      so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
      so.AddConfigEntry("session.intra_op.allow_spinning", "0");
      return so;
    };
    const Ort::Env& env = *static_cast<Ort::Env*>(options.env.get());
    graph->prepacked = std::make_unique<Ort::PrepackedWeightsContainer>();
    graph->session = std::make_unique<Ort::Session>(env, path.c_str(),
                                                    session_options(options.threads),
                                                    *graph->prepacked);
    if (options.wide_threads > std::max(1, options.threads)) {
      graph->wide = std::make_unique<Ort::Session>(env, path.c_str(),
                                                   session_options(options.wide_threads),
                                                   *graph->prepacked);
      graph->wide_threads = options.wide_threads;
    }
    Ort::Session& s = *graph->session;
    Ort::AllocatorWithDefaultOptions allocator;
    std::string graph_inputs;
    for (size_t i = 0; i < s.GetInputCount(); ++i) {
      std::string name = s.GetInputNameAllocated(i, allocator).get();
      graph_inputs += (graph_inputs.empty() ? "" : ", ") + name;
      graph->input_names.push_back(name);
    }
    if (graph->input_names.size() != c.inputs.size()) {
      return InvalidArgument(where + "inputs: the graph in " + Quoted(path) + " takes " +
                             graph_inputs + "; config.yaml names " +
                             std::to_string(c.inputs.size()) + " input(s)");
    }
    for (size_t i = 0; i < graph->input_names.size(); ++i) {
      size_t slot = c.inputs.size();
      for (size_t j = 0; j < c.inputs.size(); ++j) {
        if (c.inputs[j].name == graph->input_names[i]) slot = j;
      }
      if (slot == c.inputs.size()) {
        return InvalidArgument(where + "inputs: the graph's input " +
                               Quoted(graph->input_names[i]) +
                               " is not in config.yaml (the graph takes " + graph_inputs + ")");
      }
      const auto type = s.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType();
      if (ToOnnx(c.inputs[slot].dtype) != type) {
        return InvalidArgument(where + "inputs[" + std::to_string(slot) +
                               "].datatype: " + std::string(DataTypeName(c.inputs[slot].dtype)) +
                               " in config.yaml, but the graph's input " +
                               Quoted(graph->input_names[i]) + " has another element type");
      }
      graph->input_slot.push_back(slot);
    }
    std::vector<std::string> outputs;
    std::string graph_outputs;
    for (size_t i = 0; i < s.GetOutputCount(); ++i) {
      outputs.push_back(s.GetOutputNameAllocated(i, allocator).get());
      graph_outputs += (graph_outputs.empty() ? "" : ", ") + outputs.back();
    }
    if (c.outputs.empty()) {
      graph->output_names = outputs;
      for (size_t i = 0; i < outputs.size(); ++i) {
        graph->answer_names.push_back("output" + std::to_string(i));
      }
    } else {
      for (size_t j = 0; j < c.outputs.size(); ++j) {
        if (std::find(outputs.begin(), outputs.end(), c.outputs[j].name) == outputs.end()) {
          return InvalidArgument(where + "outputs[" + std::to_string(j) +
                                 "].name: " + Quoted(c.outputs[j].name) +
                                 " is not an output of the graph (" + graph_outputs + ")");
        }
        graph->output_names.push_back(c.outputs[j].name);
        graph->answer_names.push_back(c.outputs[j].name);
      }
    }
  } catch (const Ort::Exception& e) {
    return InvalidArgument(where + "cannot load " + Quoted(path) +
                           " as an ONNX graph: " + e.what());
  }
  for (const auto& n : graph->input_names) graph->input_ptrs.push_back(n.c_str());
  for (const auto& n : graph->output_names) graph->output_ptrs.push_back(n.c_str());
  std::shared_ptr<OnnxModel> model(new OnnxModel(std::move(graph), c, file_bytes));

  // A run on zeros of batch 1: outputs whose datatypes contradict the config fail the load.
  std::vector<NamedTensor> zeros;
  for (const auto& spec : c.inputs) {
    Shape shape = {1};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? 1 : d);
    zeros.push_back({spec.name, Tensor::Allocate(spec.dtype, shape)});
  }
  auto warm = model->Execute(zeros);
  if (!warm.ok()) {
    return InvalidArgument(where + "a run on zero inputs failed: " + warm.status().message());
  }
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    if ((*warm)[j].tensor.dtype() != c.outputs[j].dtype) {
      return InvalidArgument(where + "outputs[" + std::to_string(j) +
                             "].datatype: " + std::string(DataTypeName(c.outputs[j].dtype)) +
                             " in config.yaml, but the graph gives " +
                             std::string(DataTypeName((*warm)[j].tensor.dtype())));
    }
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  spdlog::info("model '{}': loaded {} in {} ms (onnxruntime, {} intra-op thread(s){})", c.name,
               path, ms, std::max(1, options.threads),
               model->RunsWide()
                   ? ", " + std::to_string(model->graph_->wide_threads) + " for a lone request"
                   : std::string());
  return model;
}

StatusOr<std::vector<NamedTensor>> OnnxModel::Execute(const std::vector<NamedTensor>& inputs) {
  Graph& g = *graph_;
  if (inputs.size() != config_.inputs.size()) {
    return InvalidArgument("model " + Quoted(config_.name) + " takes " +
                           std::to_string(config_.inputs.size()) + " input(s), got " +
                           std::to_string(inputs.size()));
  }
  try {
    std::vector<Ort::Value> values;
    values.reserve(g.input_names.size());
    for (size_t i = 0; i < g.input_names.size(); ++i) {
      const Tensor& t = inputs[g.input_slot[i]].tensor;
      const auto type = ToOnnx(t.dtype());
      if (!type) {
        return InvalidArgument("model " + Quoted(config_.name) + ": input " +
                               Quoted(g.input_names[i]) + " cannot be BYTES");
      }
      // ONNX Runtime reads inputs and never writes them: no copy.
      values.push_back(Ort::Value::CreateTensor(g.cpu, const_cast<std::byte*>(t.data()),
                                                t.byte_size(), t.shape().data(), t.shape().size(),
                                                *type));
    }
    Ort::Session& session =
        g.wide && CallThreads() >= g.wide_threads ? *g.wide : *g.session;
    std::vector<Ort::Value> results =
        session.Run(Ort::RunOptions{nullptr}, g.input_ptrs.data(), values.data(), values.size(),
                       g.output_ptrs.data(), g.output_ptrs.size());
    std::vector<NamedTensor> outputs;
    for (size_t i = 0; i < results.size(); ++i) {
      auto value = std::make_shared<Ort::Value>(std::move(results[i]));
      const auto info = value->GetTensorTypeAndShapeInfo();
      const auto dtype = FromOnnx(info.GetElementType());
      if (!dtype) {
        return Internal("model " + Quoted(config_.name) + ": output " + Quoted(g.output_names[i]) +
                        " has an element type inferd cannot answer");
      }
      Shape shape = info.GetShape();
      const void* data = value->GetTensorRawData();
      const size_t bytes = static_cast<size_t>(NumElements(shape)) * DataTypeSize(*dtype);
      outputs.push_back({g.answer_names[i],
                         Tensor::Borrow(*dtype, std::move(shape),
                                        std::shared_ptr<const void>(value, data), data, bytes)});
    }
    return outputs;
  } catch (const Ort::Exception& e) {
    return Internal("model " + Quoted(config_.name) + ": ONNX Runtime: " + e.what());
  }
}

bool OnnxModel::RunsWide() const { return graph_->wide != nullptr; }

}  // namespace inferd::backend
