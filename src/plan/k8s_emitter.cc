#include "plan/k8s_emitter.h"

#include <filesystem>
#include <fstream>

#include "plan/internal/k8s_objects.h"

namespace inferd::plan {
namespace fs = std::filesystem;
namespace {

Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (text.empty() || text.back() != '\n') f << "\n";
  f.close();
  if (!f) return Internal("cannot write " + path.string());
  return Status::Ok();
}

Status Finish(const YAML::Emitter& out, const fs::path& path) {
  if (!out.good()) return Internal(path.string() + ": " + out.GetLastError());
  return WriteFile(path, out.c_str());
}

// FNV-1a: short, stable, no dependency.
uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

std::string DnsLabel(const std::string& name, size_t max_length) {
  std::string label;
  for (char c : name) {
    if (c >= 'a' && c <= 'z') {
      label += c;
    } else if (c >= '0' && c <= '9') {
      label += c;
    } else if (c >= 'A' && c <= 'Z') {
      label += static_cast<char>(c - 'A' + 'a');
    } else if (label.empty() || label.back() != '-') {
      label += '-';
    }
  }
  while (!label.empty() && label.front() == '-') label.erase(label.begin());
  while (!label.empty() && label.back() == '-') label.pop_back();
  if (label == name && label.size() <= max_length) return label;
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08x", Fnv1a(name));
  const size_t keep = max_length > 9 ? max_length - 9 : 0;
  if (label.size() > keep) label.resize(keep);
  while (!label.empty() && label.back() == '-') label.pop_back();
  return label.empty() ? std::string("m") + hash : label + "-" + hash;
}

Status EmitKubernetes(const FleetPlan& plan, const K8sOptions& options, const std::string& dir) {
  std::error_code ec;
  const fs::path root(dir);
  fs::create_directories(root / "nodes", ec);
  if (ec) return Internal("cannot create " + (root / "nodes").string() + ": " + ec.message());

  // Every pod's limits first: nothing is written for a plan that cannot run.
  std::vector<internal::PodResources> resources;
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    ASSIGN_OR_RETURN(auto r, internal::ResourcesFor(plan, n, options));
    resources.push_back(std::move(r));
  }
  std::string kustomization =
      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
      "resources:\n  - routes.yaml\n";
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    YAML::Emitter out;
    internal::EmitNodeObjects(plan, n, resources[n], options, out);
    const std::string file = "nodes/" + internal::NodeObjectName(plan, n) + ".yaml";
    RETURN_IF_ERROR(Finish(out, root / file));
    kustomization += "  - " + file + "\n";
  }
  {
    YAML::Emitter out;
    internal::EmitRoutes(plan, options, out);
    RETURN_IF_ERROR(Finish(out, root / "routes.yaml"));
  }
  {
    YAML::Emitter out;
    internal::EmitKServe(plan, options, out);
    RETURN_IF_ERROR(Finish(out, root / "kserve.yaml"));
  }
  return WriteFile(root / "kustomization.yaml", kustomization);
}

}  // namespace inferd::plan
