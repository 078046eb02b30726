#include <cmath>

#include "plan/internal/k8s_objects.h"
#include "plan/internal/yaml_text.h"

namespace inferd::plan::internal {
namespace {

constexpr const char* kApp = "inferd";
constexpr const char* kStoreMount = "/models";
// The pods listen on the pod's address, so they need API keys (docs/SECURITY.md):
// the --auth-keys file comes from this Secret (key `keys.yaml`), made by the operator.
constexpr const char* kAuthSecret = "inferd-auth-keys";
constexpr const char* kAuthMount = "/etc/inferd-keys";

void Labels(YAML::Emitter& out, const std::string& node_name) {
  out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "app.kubernetes.io/name" << YAML::Value << kApp;
  out << YAML::Key << "inferd.dev/node" << YAML::Value << Text{node_name};
  out << YAML::EndMap;
}

void Metadata(YAML::Emitter& out, const std::string& name, const std::string& node_name) {
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << Text{name};
  Labels(out, node_name);
  out << YAML::EndMap;
}

void HttpProbe(YAML::Emitter& out, const char* key, const char* path, int period, int failures) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "httpGet" << YAML::Value << YAML::BeginMap << YAML::Key << "path"
      << YAML::Value << path << YAML::Key << "port" << YAML::Value << "http" << YAML::EndMap;
  out << YAML::Key << "periodSeconds" << YAML::Value << period;
  out << YAML::Key << "failureThreshold" << YAML::Value << failures;
  out << YAML::EndMap;
}

void Ports(YAML::Emitter& out, const K8sOptions& o, bool service) {
  const std::pair<const char*, int> ports[] = {
      {"http", o.http_port}, {"management", o.management_port}, {"metrics", o.metrics_port}};
  out << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, port] : ports) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
    if (service) {
      out << YAML::Key << "port" << YAML::Value << port << YAML::Key << "targetPort" << YAML::Value
          << name;
    } else {
      out << YAML::Key << "containerPort" << YAML::Value << port;
    }
    out << YAML::Key << "protocol" << YAML::Value << "TCP" << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitConfigMap(const FleetPlan& plan, size_t node, YAML::Emitter& out) {
  const std::string node_name = plan.NodeName(node);
  std::string names;
  YAML::Emitter table;  // the plan's figures for this node, for people reading the cluster
  table << YAML::BeginSeq;
  for (int i : plan.packing.nodes[node].items) {
    const PackItem& it = plan.items[i];
    const std::string& model = plan.models[it.model].name;
    names += (names.empty() ? "" : ",") + model;
    table << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << Text{model}
          << YAML::Key << "rps" << YAML::Value << it.rps << YAML::Key << "cores" << YAML::Value
          << it.cores << YAML::Key << "memory_bytes" << YAML::Value << it.memory_bytes;
    if (it.replicas > 1) {
      table << YAML::Key << "replica" << YAML::Value << it.replica + 1 << YAML::Key << "replicas"
            << YAML::Value << it.replicas;
    }
    table << YAML::EndMap;
  }
  table << YAML::EndSeq;
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "ConfigMap";
  Metadata(out, NodeObjectName(plan, node) + "-models", node_name);
  out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "models" << YAML::Value << Text{names};
  out << YAML::Key << "plan.yaml" << YAML::Value << YAML::Literal
      << std::string(table.c_str()) + "\n";
  out << YAML::EndMap << YAML::EndMap;
}

void EmitDeployment(const FleetPlan& plan, size_t node, const PodResources& res,
                    const K8sOptions& o, YAML::Emitter& out) {
  const std::string node_name = plan.NodeName(node);
  const std::string name = NodeObjectName(plan, node);
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "apps/v1";
  out << YAML::Key << "kind" << YAML::Value << "Deployment";
  Metadata(out, name, node_name);
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "replicas" << YAML::Value << 1;
  out << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels"
      << YAML::Value << YAML::BeginMap << YAML::Key << "app.kubernetes.io/name" << YAML::Value
      << kApp << YAML::Key << "inferd.dev/node" << YAML::Value << Text{node_name} << YAML::EndMap
      << YAML::EndMap;
  // A new pod is ready before the old one goes: a node's models never all go dark.
  out << YAML::Key << "strategy" << YAML::Value << YAML::BeginMap << YAML::Key << "type"
      << YAML::Value << "RollingUpdate" << YAML::Key << "rollingUpdate" << YAML::Value
      << YAML::BeginMap << YAML::Key << "maxSurge" << YAML::Value << 1 << YAML::Key
      << "maxUnavailable" << YAML::Value << 0 << YAML::EndMap << YAML::EndMap;

  out << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  Labels(out, node_name);
  out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key
      << "prometheus.io/scrape" << YAML::Value << Text{"true"} << YAML::Key << "prometheus.io/port"
      << YAML::Value << Text{std::to_string(o.metrics_port)} << YAML::Key << "prometheus.io/path"
      << YAML::Value << "/metrics" << YAML::EndMap;
  out << YAML::EndMap;

  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // SIGTERM comes after the preStop wait; inferd then drains for up to
  // --drain-timeout. The grace period covers both, with a margin.
  out << YAML::Key << "terminationGracePeriodSeconds" << YAML::Value
      << o.prestop_wait_s + o.drain_timeout_s + 5;
  // A mixed plan's pod runs on its node type: the cluster's nodes of that type
  // carry the label inferd.io/node-type=NAME (the --node-type name).
  if (plan.mixed()) {
    out << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap << YAML::Key
        << "inferd.io/node-type" << YAML::Value
        << Text{plan.types[plan.packing.nodes[node].type].name} << YAML::EndMap;
  }
  out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap << YAML::Key
      << "runAsNonRoot" << YAML::Value << true << YAML::Key << "runAsUser" << YAML::Value << 10001
      << YAML::Key << "runAsGroup" << YAML::Value << 10001 << YAML::EndMap;
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "inferd";
  out << YAML::Key << "image" << YAML::Value << Text{o.image};
  out << YAML::Key << "imagePullPolicy" << YAML::Value << "IfNotPresent";
  out << YAML::Key << "args" << YAML::Value << YAML::BeginSeq;
  // $(INFERD_MODELS): Kubernetes expands it from the env below (no shell needed).
  for (const std::string& a : ServeArgs(kStoreMount, "$(INFERD_MODELS)", o)) out << Text{a};
  out << YAML::EndSeq;
  out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
      << "name" << YAML::Value << "INFERD_MODELS" << YAML::Key << "valueFrom" << YAML::Value
      << YAML::BeginMap << YAML::Key << "configMapKeyRef" << YAML::Value << YAML::BeginMap
      << YAML::Key << "name" << YAML::Value << Text{name + "-models"} << YAML::Key << "key"
      << YAML::Value << "models" << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  Ports(out, o, false);
  // requests = limits: Guaranteed QoS, and the cgroup quota inferd reads is the plan's.
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  for (const char* kind : {"requests", "limits"}) {
    out << YAML::Key << kind << YAML::Value << YAML::BeginMap << YAML::Key << "cpu" << YAML::Value
        << Text{res.cpu} << YAML::Key << "memory" << YAML::Value
        << Text{FormatByteQuantity(res.memory)} << YAML::EndMap;
  }
  out << YAML::EndMap;
  HttpProbe(out, "readinessProbe", "/v2/health/ready", 5, 2);
  HttpProbe(out, "livenessProbe", "/v2/health/live", 10, 3);
  out << YAML::Key << "lifecycle" << YAML::Value << YAML::BeginMap << YAML::Key << "preStop"
      << YAML::Value << YAML::BeginMap << YAML::Key << "exec" << YAML::Value << YAML::BeginMap
      << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << "/bin/sleep"
      << Text{std::to_string(o.prestop_wait_s)} << YAML::EndSeq << YAML::EndMap << YAML::EndMap
      << YAML::EndMap;
  out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap << YAML::Key
      << "allowPrivilegeEscalation" << YAML::Value << false << YAML::Key << "readOnlyRootFilesystem"
      << YAML::Value << true << YAML::Key << "capabilities" << YAML::Value << YAML::BeginMap
      << YAML::Key << "drop" << YAML::Value << YAML::Flow << YAML::BeginSeq << "ALL" << YAML::EndSeq
      << YAML::EndMap << YAML::EndMap;
  out << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "model-store" << YAML::Key
      << "mountPath" << YAML::Value << kStoreMount << YAML::Key << "readOnly" << YAML::Value << true
      << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "models" << YAML::Key
      << "mountPath" << YAML::Value << "/etc/inferd" << YAML::Key << "readOnly" << YAML::Value
      << true << YAML::EndMap;
  EmitAuthKeysMount(out);
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndSeq;  // the container, containers

  out << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "model-store" << YAML::Key
      << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap << YAML::Key << "claimName"
      << YAML::Value << Text{o.model_store_claim} << YAML::Key << "readOnly" << YAML::Value << true
      << YAML::EndMap << YAML::EndMap;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "models" << YAML::Key
      << "configMap" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << Text{name + "-models"} << YAML::EndMap << YAML::EndMap;
  EmitAuthKeysVolume(out);
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap
      << YAML::EndMap;  // pod spec, template, spec, doc
}

void EmitService(const FleetPlan& plan, size_t node, const K8sOptions& o, YAML::Emitter& out) {
  const std::string node_name = plan.NodeName(node);
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Service";
  Metadata(out, NodeObjectName(plan, node), node_name);
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key
      << "app.kubernetes.io/name" << YAML::Value << kApp << YAML::Key << "inferd.dev/node"
      << YAML::Value << Text{node_name} << YAML::EndMap;
  Ports(out, o, true);
  out << YAML::EndMap << YAML::EndMap;
}

void EmitAutoscaler(const FleetPlan& plan, size_t node, const K8sOptions& o, YAML::Emitter& out) {
  const std::string name = NodeObjectName(plan, node);
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "autoscaling/v2";
  out << YAML::Key << "kind" << YAML::Value << "HorizontalPodAutoscaler";
  Metadata(out, name, plan.NodeName(node));
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "scaleTargetRef" << YAML::Value << YAML::BeginMap << YAML::Key << "apiVersion"
      << YAML::Value << "apps/v1" << YAML::Key << "kind" << YAML::Value << "Deployment" << YAML::Key
      << "name" << YAML::Value << Text{name} << YAML::EndMap;
  out << YAML::Key << "minReplicas" << YAML::Value << 1;
  out << YAML::Key << "maxReplicas" << YAML::Value << o.hpa_max_replicas;
  // inferd_queue_depth: requests queued, not yet running, per model. Summed per
  // pod by the metrics adapter (docs/SCALING.md): it grows only when every
  // executor of the pod is busy, so it is the pod's own overload signal.
  out << YAML::Key << "metrics" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << "Pods";
  out << YAML::Key << "pods" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "metric" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << "inferd_queue_depth" << YAML::EndMap;
  out << YAML::Key << "target" << YAML::Value << YAML::BeginMap << YAML::Key << "type"
      << YAML::Value << "AverageValue" << YAML::Key << "averageValue" << YAML::Value
      << Text{std::to_string(o.hpa_queue_depth_target)} << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  // Slow to scale down: a node-sized pod is expensive to bring back.
  out << YAML::Key << "behavior" << YAML::Value << YAML::BeginMap << YAML::Key << "scaleDown"
      << YAML::Value << YAML::BeginMap << YAML::Key << "stabilizationWindowSeconds" << YAML::Value
      << 600 << YAML::EndMap << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap;
}

}  // namespace

StatusOr<PodResources> ResourcesFor(const FleetPlan& plan, size_t node, const K8sOptions& o) {
  const NodeLoad& load = plan.packing.nodes[node];
  PodResources r;
  const NodeShape shape = plan.ShapeOf(node);
  const double whole = std::max(1.0, std::ceil(load.cores - 1e-9));
  if (whole <= shape.cores) {
    r.cpu = std::to_string(static_cast<int64_t>(whole));
  } else {  // a node of fractional cores: whole cores would not fit it
    r.cpu = std::to_string(static_cast<int64_t>(std::ceil(load.cores * 1000))) + "m";
  }
  r.memory = load.memory_bytes + o.memory_overhead_bytes;
  if (r.memory > shape.memory_bytes) {
    return InvalidArgument(
        plan.NodeName(node) + ": its models' " + FormatBytesShort(load.memory_bytes) +
        " and the process's " + FormatBytesShort(o.memory_overhead_bytes) + " exceed the node's " +
        FormatBytesShort(shape.memory_bytes) + ": raise --headroom or lower the memory overhead");
  }
  return r;
}

std::string NodeObjectName(const FleetPlan& plan, size_t node) {
  return "inferd-" + plan.NodeName(node);
}

std::vector<std::string> ServeArgs(const std::string& store, const std::string& models,
                                   const K8sOptions& o) {
  return {"serve",
          "--model-store",
          store,
          "--models",
          models,
          "--bind",
          "0.0.0.0",
          "--auth-keys",
          std::string(kAuthMount) + "/keys.yaml",
          "--http-port",
          std::to_string(o.http_port),
          "--management-port",
          std::to_string(o.management_port),
          "--metrics-port",
          std::to_string(o.metrics_port),
          "--drain-timeout",
          std::to_string(o.drain_timeout_s)};
}

void EmitAuthKeysMount(YAML::Emitter& out) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "auth-keys" << YAML::Key
      << "mountPath" << YAML::Value << kAuthMount << YAML::Key << "readOnly" << YAML::Value << true
      << YAML::EndMap;
}

void EmitAuthKeysVolume(YAML::Emitter& out) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "auth-keys" << YAML::Key
      << "secret" << YAML::Value << YAML::BeginMap << YAML::Key << "secretName" << YAML::Value
      << kAuthSecret << YAML::EndMap << YAML::EndMap;
}

void EmitNodeObjects(const FleetPlan& plan, size_t node, const PodResources& resources,
                     const K8sOptions& options, YAML::Emitter& out) {
  EmitConfigMap(plan, node, out);
  EmitDeployment(plan, node, resources, options, out);
  EmitService(plan, node, options, out);
  EmitAutoscaler(plan, node, options, out);
}

}  // namespace inferd::plan::internal
