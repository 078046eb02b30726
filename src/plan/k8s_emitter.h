// EmitKubernetes: writes what Kubernetes (and KServe) run for a FleetPlan.
//
// DIR/nodes/<node>.yaml   per node of the plan: a ConfigMap naming its models,
//                         a Deployment (one pod; CPU and memory requests =
//                         limits; probes; preStop; grace period), a Service,
//                         and a HorizontalPodAutoscaler on inferd_queue_depth;
//                         in a plan over node types the pod selects its type's
//                         nodes: nodeSelector inferd.io/node-type: NAME
// DIR/routes.yaml         a Gateway and one HTTPRoute per model: its
//                         /v2/models/{m} and /predictions/{m} paths go to the
//                         Services of the nodes holding it
// DIR/kustomization.yaml  the two above, for `kubectl apply -k DIR`
// DIR/kserve.yaml         the KServe alternative: a ServingRuntime for inferd
//                         (protocol v2) and an InferenceService example
//
// Why a route per model on one Gateway rather than a Service per model: both
// inferd APIs carry the model in the path, so one address serves every model;
// a plan of 10,000 models costs 10,000 HTTPRoutes (configuration in the
// gateway) instead of 10,000 ClusterIPs and kube-proxy rule sets on every
// node; and a model with replicas is one route with a backend per node. The
// price is a Gateway API implementation in the cluster, and gRPC (model named
// in the message, not the path) reaches a model through its node's Service.
//
// YAML is written with yaml-cpp's emitter; strings a YAML reader would take
// for numbers or booleans ("8080", "true") are quoted. Not thread-safe for
// one DIR; thread-compatible otherwise.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "plan/fleet_plan.h"

namespace inferd::plan {

struct K8sOptions {
  std::string image = "inferd:latest";                   // --image: the image of deploy/image/
  std::string model_store_claim = "inferd-model-store";  // PVC with the store, mounted at /models
  std::string gateway_class = "inferd-gateway";  // --gateway-class: the cluster's GatewayClass
  int http_port = 8080;
  int management_port = 8081;
  int metrics_port = 8082;
  int drain_timeout_s = 30;  // inferd serve --drain-timeout
  // Time between the pod leaving its Services' endpoints and SIGTERM: the
  // preStop wait, so requests routed by not-yet-updated proxies still land.
  int prestop_wait_s = 10;
  // The process's own memory beyond its models' copies (libtorch, executor
  // threads, buffers), added to each pod's limit.
  int64_t memory_overhead_bytes = int64_t{512} << 20;
  int hpa_max_replicas = 3;
  int hpa_queue_depth_target = 8;  // requests queued per pod, on average, that adds a pod
};

// Creates DIR (and DIR/nodes) when missing and writes the files above.
// kInvalidArgument when a pod's limits would exceed its node (memory overhead
// past the headroom); kInternal when a file cannot be written.
Status EmitKubernetes(const FleetPlan& plan, const K8sOptions& options, const std::string& dir);

// A DNS-1123 label for a model name ("digits_cnn" -> "digits-cnn-1f3a..."):
// lower case, [a-z0-9-], at most `max_length`; a name that had to change gets
// a hash of the original so that two models never share a label.
std::string DnsLabel(const std::string& name, size_t max_length = 63);

}  // namespace inferd::plan
