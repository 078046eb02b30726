#include "plan/internal/k8s_objects.h"
#include "plan/internal/yaml_text.h"

namespace inferd::plan::internal {

std::string RouteName(const std::string& model) { return "inferd-model-" + DnsLabel(model, 50); }

void EmitRoutes(const FleetPlan& plan, const K8sOptions& o, YAML::Emitter& out) {
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "gateway.networking.k8s.io/v1";
  out << YAML::Key << "kind" << YAML::Value << "Gateway";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << "inferd" << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gatewayClassName" << YAML::Value << Text{o.gateway_class};
  out << YAML::Key << "listeners" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
      << "name" << YAML::Value << "http" << YAML::Key << "protocol" << YAML::Value << "HTTP"
      << YAML::Key << "port" << YAML::Value << 80 << YAML::EndMap << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;

  // model -> the nodes holding its replicas, in node order.
  std::vector<std::vector<size_t>> holders(plan.models.size());
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    for (int i : plan.packing.nodes[n].items) holders[plan.items[i].model].push_back(n);
  }
  for (size_t m = 0; m < plan.models.size(); ++m) {
    const std::string& model = plan.models[m].name;
    out << YAML::BeginDoc << YAML::BeginMap;
    out << YAML::Key << "apiVersion" << YAML::Value << "gateway.networking.k8s.io/v1";
    out << YAML::Key << "kind" << YAML::Value << "HTTPRoute";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << Text{RouteName(model)};
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key
        << "app.kubernetes.io/name" << YAML::Value << "inferd" << YAML::EndMap;
    // The model's own name, which a label value may not be able to hold.
    out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key
        << "inferd.dev/model" << YAML::Value << Text{model} << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "parentRefs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
        << "name" << YAML::Value << "inferd" << YAML::EndMap << YAML::EndSeq;
    out << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    // PathPrefix matches whole path elements: /v2/models/m1 does not catch m10.
    out << YAML::Key << "matches" << YAML::Value << YAML::BeginSeq;
    for (const char* prefix : {"/v2/models/", "/predictions/"}) {
      out << YAML::BeginMap << YAML::Key << "path" << YAML::Value << YAML::BeginMap << YAML::Key
          << "type" << YAML::Value << "PathPrefix" << YAML::Key << "value" << YAML::Value
          << Text{std::string(prefix) + model} << YAML::EndMap << YAML::EndMap;
    }
    out << YAML::EndSeq;
    // Replicas carry equal shares of the rps: equal weights.
    out << YAML::Key << "backendRefs" << YAML::Value << YAML::BeginSeq;
    for (size_t node : holders[m]) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
          << Text{NodeObjectName(plan, node)} << YAML::Key << "port" << YAML::Value << o.http_port
          << YAML::Key << "weight" << YAML::Value << 1 << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap << YAML::EndSeq;  // rule, rules
    out << YAML::EndMap << YAML::EndMap;  // spec, doc
  }
}

}  // namespace inferd::plan::internal
