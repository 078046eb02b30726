#include "plan/k8s_emitter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "plan/internal/yaml_text.h"

namespace inferd::plan {
namespace {

namespace fs = std::filesystem;

ModelDemand DemandOf(std::string name, double rps, double core_ms, int64_t memory) {
  ModelDemand m;
  m.name = std::move(name);
  m.rps = rps;
  m.core_ms = core_ms;
  m.memory_bytes = memory;
  m.line = 1;
  return m;
}

// A plan with a model split in two replicas, small models, and a name that
// is not a DNS label.
FleetPlan SmallPlan() {
  NodeShape shape;
  shape.cores = 8;
  shape.memory_bytes = 16LL << 30;
  shape.headroom = 0.2;  // 6.4 cores, 12.8 GiB usable
  auto plan =
      MakeFleetPlan({DemandOf("hot", 1000, 10, 1LL << 30), DemandOf("resnet18", 100, 20, 200 << 20),
                     DemandOf("digits_cnn", 50, 2, 10 << 20), DemandOf("big", 1, 50, 9LL << 30)},
                    shape, "f.yaml");
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return std::move(plan).value();
}

class K8sEmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("k8s-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Every document of every file, by kind.
  std::multimap<std::string, YAML::Node> LoadAll() {
    std::multimap<std::string, YAML::Node> docs;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      if (e.path().extension() != ".yaml" || e.path().filename() == "kustomization.yaml") continue;
      for (const YAML::Node& d : YAML::LoadAllFromFile(e.path().string())) {
        docs.emplace(d["kind"].as<std::string>(), d);
      }
    }
    return docs;
  }

  fs::path dir_;
};

TEST_F(K8sEmitterTest, OneDeploymentServiceConfigMapAndAutoscalerPerNode) {
  FleetPlan plan = SmallPlan();
  K8sOptions o;
  o.image = "registry.example/inferd:1.0";
  ASSERT_TRUE(EmitKubernetes(plan, o, dir_.string()).ok());
  auto docs = LoadAll();
  const size_t nodes = plan.packing.nodes.size();
  ASSERT_GE(nodes, 2u);  // the hot model's two replicas need two nodes
  EXPECT_EQ(docs.count("Deployment"), nodes);
  EXPECT_EQ(docs.count("Service"), nodes);
  EXPECT_EQ(docs.count("ConfigMap"), nodes);
  EXPECT_EQ(docs.count("HorizontalPodAutoscaler"), nodes);

  std::map<std::string, YAML::Node> config_maps;
  for (auto [it, end] = docs.equal_range("ConfigMap"); it != end; ++it) {
    config_maps[it->second["metadata"]["name"].as<std::string>()] = it->second;
  }
  std::set<std::string> deployments;
  for (auto [it, end] = docs.equal_range("Deployment"); it != end; ++it) {
    const YAML::Node& d = it->second;
    const std::string name = d["metadata"]["name"].as<std::string>();
    deployments.insert(name);
    const size_t n = std::stoul(name.substr(name.size() - 4)) - 1;
    const NodeLoad& load = plan.packing.nodes[n];
    EXPECT_EQ(d["apiVersion"].as<std::string>(), "apps/v1");
    EXPECT_EQ(d["spec"]["replicas"].as<int>(), 1);
    const YAML::Node pod = d["spec"]["template"]["spec"];
    const YAML::Node labels = d["spec"]["template"]["metadata"]["labels"];
    for (const auto& kv : d["spec"]["selector"]["matchLabels"]) {
      EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(), kv.second.as<std::string>());
    }
    const YAML::Node c = pod["containers"][0];
    EXPECT_EQ(c["image"].as<std::string>(), o.image);

    // requests = limits; whole cores covering the plan's; memory = models + overhead.
    const YAML::Node req = c["resources"]["requests"], lim = c["resources"]["limits"];
    EXPECT_EQ(req["cpu"].as<std::string>(), lim["cpu"].as<std::string>());
    EXPECT_EQ(req["memory"].as<std::string>(), lim["memory"].as<std::string>());
    const int cpu = std::stoi(lim["cpu"].as<std::string>());
    EXPECT_GE(cpu, load.cores);
    EXPECT_LT(cpu, load.cores + 1);
    EXPECT_LE(cpu, plan.shape.cores);
    EXPECT_EQ(*ParseByteSize(lim["memory"].as<std::string>()),
              load.memory_bytes + o.memory_overhead_bytes);

    EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/v2/health/ready");
    EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/v2/health/live");
    EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"].as<std::string>(), "http");
    const int grace = pod["terminationGracePeriodSeconds"].as<int>();
    const YAML::Node prestop = c["lifecycle"]["preStop"]["exec"]["command"];
    ASSERT_EQ(prestop.size(), 2u);
    EXPECT_EQ(prestop[0].as<std::string>(), "/bin/sleep");
    const int wait = prestop[1].as<int>();
    EXPECT_GT(wait, 0);
    EXPECT_GT(grace, wait + o.drain_timeout_s);
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());

    // The args: a list of strings, the serve command reading the ConfigMap's models.
    std::vector<std::string> args;
    for (const YAML::Node& a : c["args"]) {
      // "8080" plain would reach Kubernetes as a number and be refused.
      if (std::isdigit(static_cast<unsigned char>(a.Scalar()[0]))) {
        EXPECT_EQ(a.Tag(), "!") << a.Scalar() << " must be quoted";
      }
      args.push_back(a.as<std::string>());
    }
    EXPECT_EQ(args[0], "serve");
    auto after = [&](const std::string& flag) {
      auto it = std::find(args.begin(), args.end(), flag);
      return it == args.end() || it + 1 == args.end() ? std::string() : *(it + 1);
    };
    EXPECT_EQ(after("--models"), "$(INFERD_MODELS)");
    EXPECT_EQ(after("--drain-timeout"), std::to_string(o.drain_timeout_s));
    EXPECT_EQ(after("--http-port"), "8080");
    EXPECT_EQ(after("--bind"), "0.0.0.0");
    // A pod's address is reachable: the keys come from a Secret.
    EXPECT_EQ(after("--auth-keys"), "/etc/inferd-keys/keys.yaml");
    bool mounted = false;
    for (const YAML::Node& m : c["volumeMounts"]) {
      if (m["name"].as<std::string>() == "auth-keys") {
        mounted = m["mountPath"].as<std::string>() == "/etc/inferd-keys";
      }
    }
    EXPECT_TRUE(mounted);
    const YAML::Node ref = c["env"][0]["valueFrom"]["configMapKeyRef"];
    EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "INFERD_MODELS");
    ASSERT_TRUE(config_maps.count(ref["name"].as<std::string>())) << ref["name"];
    const YAML::Node cm = config_maps[ref["name"].as<std::string>()];
    std::string expected;
    for (int i : load.items)
      expected += (expected.empty() ? "" : ",") + plan.models[plan.items[i].model].name;
    EXPECT_EQ(cm["data"][ref["key"].as<std::string>()].as<std::string>(), expected);
    EXPECT_EQ(YAML::Load(cm["data"]["plan.yaml"].as<std::string>()).size(), load.items.size());
  }
  for (auto [it, end] = docs.equal_range("Service"); it != end; ++it) {
    EXPECT_TRUE(deployments.count(it->second["metadata"]["name"].as<std::string>()));
    EXPECT_EQ(it->second["spec"]["ports"][0]["port"].as<int>(), 8080);
  }
  for (auto [it, end] = docs.equal_range("HorizontalPodAutoscaler"); it != end; ++it) {
    const YAML::Node spec = it->second["spec"];
    EXPECT_EQ(it->second["apiVersion"].as<std::string>(), "autoscaling/v2");
    EXPECT_TRUE(deployments.count(spec["scaleTargetRef"]["name"].as<std::string>()));
    EXPECT_EQ(spec["metrics"][0]["type"].as<std::string>(), "Pods");
    EXPECT_EQ(spec["metrics"][0]["pods"]["metric"]["name"].as<std::string>(), "inferd_queue_depth");
    EXPECT_GT(spec["maxReplicas"].as<int>(), spec["minReplicas"].as<int>());
  }
}

TEST_F(K8sEmitterTest, EachModelRoutesToTheNodesHoldingIt) {
  FleetPlan plan = SmallPlan();
  ASSERT_TRUE(EmitKubernetes(plan, K8sOptions{}, dir_.string()).ok());
  auto docs = LoadAll();
  EXPECT_EQ(docs.count("Gateway"), 1u);
  ASSERT_EQ(docs.count("HTTPRoute"), plan.models.size());
  std::map<std::string, std::set<std::string>> holders;
  for (size_t n = 0; n < plan.packing.nodes.size(); ++n) {
    for (int i : plan.packing.nodes[n].items) {
      holders[plan.models[plan.items[i].model].name].insert("inferd-" + plan.NodeName(n));
    }
  }
  std::set<std::string> names;
  for (auto [it, end] = docs.equal_range("HTTPRoute"); it != end; ++it) {
    const YAML::Node& r = it->second;
    const std::string model = r["metadata"]["annotations"]["inferd.dev/model"].as<std::string>();
    const std::string name = r["metadata"]["name"].as<std::string>();
    EXPECT_TRUE(names.insert(name).second);
    EXPECT_EQ(DnsLabel(name), name);
    const YAML::Node rule = r["spec"]["rules"][0];
    EXPECT_EQ(rule["matches"][0]["path"]["value"].as<std::string>(), "/v2/models/" + model);
    EXPECT_EQ(rule["matches"][1]["path"]["value"].as<std::string>(), "/predictions/" + model);
    std::set<std::string> backends;
    for (const YAML::Node& b : rule["backendRefs"]) {
      backends.insert(b["name"].as<std::string>());
      EXPECT_EQ(b["port"].as<int>(), 8080);
    }
    EXPECT_EQ(backends, holders[model]) << model;
  }
  EXPECT_EQ(holders["hot"].size(), 2u);
  const std::string kustomization = [&] {
    std::ifstream f(dir_ / "kustomization.yaml");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  EXPECT_THAT(kustomization, ::testing::HasSubstr("routes.yaml"));
  EXPECT_THAT(kustomization, ::testing::HasSubstr("nodes/inferd-node-0001.yaml"));
}

TEST_F(K8sEmitterTest, KServeRuntimeSpeaksV2AndTheExampleUsesIt) {
  FleetPlan plan = SmallPlan();
  ASSERT_TRUE(EmitKubernetes(plan, K8sOptions{}, dir_.string()).ok());
  auto docs = LoadAll();
  ASSERT_EQ(docs.count("ServingRuntime"), 1u);
  ASSERT_EQ(docs.count("InferenceService"), 1u);
  const YAML::Node rt = docs.find("ServingRuntime")->second;
  EXPECT_EQ(rt["apiVersion"].as<std::string>(), "serving.kserve.io/v1alpha1");
  EXPECT_EQ(rt["spec"]["protocolVersions"][0].as<std::string>(), "v2");
  const YAML::Node c = rt["spec"]["containers"][0];
  EXPECT_EQ(c["name"].as<std::string>(), "kserve-container");
  EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 8080);
  std::vector<std::string> args = c["args"].as<std::vector<std::string>>();
  EXPECT_NE(std::find(args.begin(), args.end(), "{{.Name}}"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "/mnt/models"), args.end());
  const YAML::Node isvc = docs.find("InferenceService")->second;
  EXPECT_EQ(isvc["apiVersion"].as<std::string>(), "serving.kserve.io/v1beta1");
  const YAML::Node model = isvc["spec"]["predictor"]["model"];
  EXPECT_EQ(model["runtime"].as<std::string>(), rt["metadata"]["name"].as<std::string>());
  EXPECT_EQ(model["protocolVersion"].as<std::string>(), "v2");
  EXPECT_EQ(model["modelFormat"]["name"].as<std::string>(),
            rt["spec"]["supportedModelFormats"][0]["name"].as<std::string>());
  // The first model whose name is a DNS label: "hot", two replicas.
  EXPECT_EQ(isvc["metadata"]["name"].as<std::string>(), "hot");
  EXPECT_EQ(isvc["spec"]["predictor"]["minReplicas"].as<int>(), 2);
  EXPECT_EQ(model["resources"]["requests"]["cpu"].as<std::string>(),
            model["resources"]["limits"]["cpu"].as<std::string>());
}

TEST_F(K8sEmitterTest, RefusesPodsThatWouldNotFitTheirNode) {
  FleetPlan plan = SmallPlan();
  K8sOptions o;
  o.memory_overhead_bytes = 8LL << 30;  // past the 20% headroom of 16 GiB
  Status s = EmitKubernetes(plan, o, dir_.string());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("exceed the node's"));
  EXPECT_FALSE(fs::exists(dir_ / "routes.yaml"));
}

TEST(DnsLabelTest, ValidNamesStayAndOthersGetAHash) {
  EXPECT_EQ(DnsLabel("resnet18"), "resnet18");
  const std::string a = DnsLabel("digits_cnn"), b = DnsLabel("digits.cnn");
  EXPECT_THAT(a, ::testing::StartsWith("digits-cnn-"));
  EXPECT_NE(a, b);
  EXPECT_EQ(DnsLabel(std::string(100, 'x')).size(), 63u);
  EXPECT_EQ(DnsLabel("__"), DnsLabel("__"));
  for (const std::string& s :
       {DnsLabel("__"), DnsLabel("Big_Model"), DnsLabel(std::string(100, 'x'))}) {
    EXPECT_TRUE(s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos)
        << s;
    EXPECT_NE(s.front(), '-');
    EXPECT_NE(s.back(), '-');
  }
}

TEST(YamlTextTest, QuotesWhatWouldReadAsANumberOrBoolean) {
  for (const char* s : {"8080", "1.5", "-3", ".5", "true", "No", "null", "~", "", "1e3", "0x1f"}) {
    EXPECT_TRUE(internal::NeedsQuotes(s)) << s;
  }
  for (const char* s :
       {"serve", "--models", "/models", "inferd-node-0001", "$(INFERD_MODELS)", "v2"}) {
    EXPECT_FALSE(internal::NeedsQuotes(s)) << s;
  }
  YAML::Emitter out;
  out << YAML::BeginSeq << internal::Text{"8080"} << internal::Text{"true"}
      << internal::Text{"serve"} << YAML::EndSeq;
  const YAML::Node back = YAML::Load(out.c_str());
  EXPECT_EQ(back[0].Tag(), "!");  // quoted: a string to every reader
  EXPECT_EQ(back[1].Tag(), "!");
  EXPECT_EQ(back[2].Tag(), "?");  // plain
}

TEST_F(K8sEmitterTest, AMixedPlansPodsSelectTheirNodeTypeAndFitIt) {
  const std::vector<NodeType> types = {{"cpu", 16, 16LL << 30, 0.7}, {"mem", 4, 64LL << 30, 0.5}};
  auto plan =
      MakeMixedFleetPlan({DemandOf("hot", 1000, 10, 1LL << 30), DemandOf("big", 1, 50, 40LL << 30),
                          DemandOf("digits_cnn", 50, 2, 10 << 20)},
                         types, 0.2, "f.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(EmitKubernetes(*plan, K8sOptions{}, dir_.string()).ok());
  auto docs = LoadAll();
  std::set<std::string> selected;
  size_t deployments = 0;
  for (auto [it, end] = docs.equal_range("Deployment"); it != end; ++it, ++deployments) {
    const YAML::Node pod = it->second["spec"]["template"]["spec"];
    const std::string type = pod["nodeSelector"]["inferd.io/node-type"].as<std::string>();
    selected.insert(type);
    // The pod's limits fit its own type's node, not the largest type's.
    const YAML::Node limits = pod["containers"][0]["resources"]["limits"];
    const NodeType& t = type == "cpu" ? types[0] : types[1];
    EXPECT_LE(std::stod(limits["cpu"].as<std::string>()), t.cores);
  }
  EXPECT_EQ(deployments, plan->packing.nodes.size());
  // The 40 GiB model fits only the memory type; hot (10 cores) only the core type.
  EXPECT_EQ(selected, (std::set<std::string>{"cpu", "mem"}));
}

}  // namespace
}  // namespace inferd::plan
