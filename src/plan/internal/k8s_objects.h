// The Kubernetes and KServe objects of a plan, each appended to a yaml-cpp
// emitter as one document. k8s_emitter.cc decides which file each goes to.
// Pure functions of their arguments; thread-compatible.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plan/fleet_plan.h"
#include "plan/k8s_emitter.h"

namespace inferd::plan::internal {

// What a node's pod asks for: CPU in whole cores (inferd's core plan counts
// whole CPUs of the cgroup quota, and whole-core Guaranteed pods can get
// exclusive cores), memory = its models' copies + the process overhead.
struct PodResources {
  std::string cpu;     // a Kubernetes quantity: "13" or, on fractional nodes, "2500m"
  int64_t memory = 0;  // bytes
};
StatusOr<PodResources> ResourcesFor(const FleetPlan& plan, size_t node, const K8sOptions& options);

std::string NodeObjectName(const FleetPlan& plan, size_t node);  // "inferd-node-0001"
std::string RouteName(const std::string& model);                 // "inferd-model-m0001"

// ConfigMap, Deployment, Service and HorizontalPodAutoscaler of one node.
void EmitNodeObjects(const FleetPlan& plan, size_t node, const PodResources& resources,
                     const K8sOptions& options, YAML::Emitter& out);

// The Gateway and one HTTPRoute per model.
void EmitRoutes(const FleetPlan& plan, const K8sOptions& options, YAML::Emitter& out);

// A ServingRuntime for inferd and an InferenceService for one model of the plan.
void EmitKServe(const FleetPlan& plan, const K8sOptions& options, YAML::Emitter& out);

// The arguments of `inferd serve` in a pod: store, models, ports, drain, and
// --auth-keys from the Secret `inferd-auth-keys` (key keys.yaml; docs/SCALING.md).
std::vector<std::string> ServeArgs(const std::string& store, const std::string& models,
                                   const K8sOptions& options);
// That Secret as a container's volumeMounts entry and a pod's volumes entry.
void EmitAuthKeysMount(YAML::Emitter& out);
void EmitAuthKeysVolume(YAML::Emitter& out);

}  // namespace inferd::plan::internal
