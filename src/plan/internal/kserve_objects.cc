#include <cmath>

#include "plan/internal/k8s_objects.h"
#include "plan/internal/yaml_text.h"

namespace inferd::plan::internal {
namespace {

// KServe mounts the InferenceService's storageUri here.
constexpr const char* kKServeStore = "/mnt/models";

}  // namespace

void EmitKServe(const FleetPlan& plan, const K8sOptions& o, YAML::Emitter& out) {
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "serving.kserve.io/v1alpha1";
  out << YAML::Key << "kind" << YAML::Value << "ServingRuntime";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << "inferd" << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key
      << "prometheus.kserve.io/port" << YAML::Value << Text{std::to_string(o.metrics_port)}
      << YAML::Key << "prometheus.kserve.io/path" << YAML::Value << "/metrics" << YAML::EndMap;
  // TorchScript files: the format name KServe's Triton runtime uses for them.
  // Not auto-selected: an InferenceService asks for `runtime: inferd`.
  out << YAML::Key << "supportedModelFormats" << YAML::Value << YAML::BeginSeq << YAML::BeginMap
      << YAML::Key << "name" << YAML::Value << "pytorch" << YAML::Key << "version" << YAML::Value
      << Text{"1"} << YAML::Key << "autoSelect" << YAML::Value << false << YAML::EndMap
      << YAML::EndSeq;
  out << YAML::Key << "protocolVersions" << YAML::Value << YAML::Flow << YAML::BeginSeq << "v2"
      << YAML::EndSeq;
  out << YAML::Key << "multiModel" << YAML::Value << false;
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "kserve-container";
  out << YAML::Key << "image" << YAML::Value << Text{o.image};
  // {{.Name}}: KServe puts the InferenceService's name here; the service is
  // named after its model, which the store at /mnt/models holds as a folder.
  out << YAML::Key << "args" << YAML::Value << YAML::BeginSeq;
  for (const std::string& a : ServeArgs(kKServeStore, "{{.Name}}", o)) out << Text{a};
  out << YAML::EndSeq;
  out << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
      << "name" << YAML::Value << "http1" << YAML::Key << "containerPort" << YAML::Value
      << o.http_port << YAML::Key << "protocol" << YAML::Value << "TCP" << YAML::EndMap
      << YAML::EndSeq;
  out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap << YAML::Key
      << "runAsNonRoot" << YAML::Value << true << YAML::Key << "runAsUser" << YAML::Value << 10001
      << YAML::EndMap;
  out << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  EmitAuthKeysMount(out);
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndSeq;  // container, containers
  out << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  EmitAuthKeysVolume(out);
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;  // spec, doc

  // The example: the first model whose name is already a DNS label (an
  // InferenceService's name must be one, and {{.Name}} must be the model's).
  size_t pick = 0;
  for (size_t m = 0; m < plan.models.size(); ++m) {
    if (DnsLabel(plan.models[m].name) == plan.models[m].name) {
      pick = m;
      break;
    }
  }
  const ModelDemand& model = plan.models[pick];
  int replicas = 1;
  double cores = model.cores();
  for (const PackItem& it : plan.items) {
    if (it.model == static_cast<int>(pick)) {
      replicas = it.replicas;
      cores = it.cores;
      break;
    }
  }
  const std::string cpu =
      std::to_string(static_cast<int64_t>(std::max(1.0, std::ceil(cores - 1e-9))));
  const std::string memory = FormatByteQuantity(model.memory_bytes + o.memory_overhead_bytes);

  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "serving.kserve.io/v1beta1";
  out << YAML::Key << "kind" << YAML::Value << "InferenceService";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << Text{DnsLabel(model.name)} << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "predictor"
      << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "minReplicas" << YAML::Value << replicas;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "modelFormat" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << "pytorch" << YAML::EndMap;
  out << YAML::Key << "runtime" << YAML::Value << "inferd";
  out << YAML::Key << "protocolVersion" << YAML::Value << "v2";
  out << YAML::Key << "storageUri" << YAML::Value << Text{"pvc://" + o.model_store_claim};
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  for (const char* kind : {"requests", "limits"}) {
    out << YAML::Key << kind << YAML::Value << YAML::BeginMap << YAML::Key << "cpu" << YAML::Value
        << Text{cpu} << YAML::Key << "memory" << YAML::Value << Text{memory} << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap
      << YAML::EndMap;  // model, predictor, spec, doc
}

}  // namespace inferd::plan::internal
