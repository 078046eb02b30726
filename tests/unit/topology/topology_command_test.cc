#include "topology/topology_command.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <sstream>

#include "unit/topology/fake_tree.h"

namespace inferd::topology {
namespace {

using testing::FakeTree;

constexpr const char* kInputs = "inputs: [{name: x, datatype: FP32, shape: [3]}]\n";

TopologyCommandOptions SyntheticOptions(const FakeTree& t) {
  TopologyCommandOptions o;
  o.detect.hardware.synthetic = "package:2 core:12 pu:2";
  o.detect.cgroups = {t.Path("proc"), t.Path("sys/fs/cgroup")};
  return o;
}

std::vector<int64_t> Ints(simdjson::dom::element e) {
  std::vector<int64_t> out;
  for (auto v : e.get_array()) out.push_back(v.get_int64());
  return out;
}

TEST(TopologyCommandTest, JsonReportsBudgetPlanAndModels) {
  FakeTree t;
  t.Write("proc/self/cgroup", "0::/ctr\n");
  t.Write("sys/fs/cgroup/cgroup.controllers", "cpu\n");
  t.Write("sys/fs/cgroup/ctr/cpu.max", "400000 100000\n");
  t.Write("store/resnet/config.yaml", std::string(kInputs) + "instances: {count: 2, threads: 2}\n");
  t.Write("store/mobilenet/config.yaml", std::string(kInputs) + "instances: auto\n");
  t.Write("store/broken/config.yaml", "max_batch_size: lots\n");
  t.MakeDir("store/not_a_model");
  TopologyCommandOptions o = SyntheticOptions(t);
  o.model_store = t.Path("store");
  o.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunTopologyCommand(o, out, err), 0) << err.str();
  EXPECT_NE(err.str().find("broken"), std::string::npos) << err.str();

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out.str()).get(doc), simdjson::SUCCESS) << out.str();
  EXPECT_EQ(int64_t(doc["usable_cores"]), 4);
  EXPECT_EQ(doc["cores"].get_array().size(), 24u);
  EXPECT_EQ(doc["affinity"].get_array().size(), 48u);
  EXPECT_TRUE(doc["cpuset"].is_null());
  EXPECT_EQ(int64_t(doc["quota"]["whole_cpus"]), 4);
  EXPECT_EQ(doc["numa_nodes"].get_array().size(), 1u);
  EXPECT_EQ(int64_t(doc["group_size"]), 2);

  auto executors = doc["executors"].get_array();
  ASSERT_EQ(executors.size(), 2u);
  int64_t threads = 0;
  for (auto e : executors) {
    threads += int64_t(e["threads"]);
    EXPECT_EQ(Ints(e["cores"]).size(), 2u);
  }
  EXPECT_EQ(threads, 4);
  EXPECT_EQ(Ints(executors.at(0)["cores"]), (std::vector<int64_t>{0, 2}));

  auto models = doc["models"].get_array();
  ASSERT_EQ(models.size(), 2u);  // sorted by name; broken left out
  EXPECT_EQ(std::string_view(models.at(0)["name"]), "mobilenet");
  EXPECT_EQ(std::string_view(models.at(0)["instances"]), "auto");
  EXPECT_EQ(std::string_view(models.at(1)["name"]), "resnet");
  EXPECT_EQ(int64_t(models.at(1)["max_concurrency"]), 2);
  EXPECT_EQ(Ints(models.at(1)["executors"]), (std::vector<int64_t>{0, 1}));
}

TEST(TopologyCommandTest, TextNamesEveryFact) {
  FakeTree t;
  TopologyCommandOptions o = SyntheticOptions(t);
  o.cpus = "0-3";
  std::ostringstream out, err;
  ASSERT_EQ(RunTopologyCommand(o, out, err), 0) << err.str();
  const std::string s = out.str();
  for (const char* want : {"2 packages", "24 physical cores", "48 hardware threads", "Affinity:",
                           "Cgroup cpuset: none", "CPU quota:     none", "--cpus:        0-3",
                           "Usable cores:  2", "executor 1: 1 thread on cpus 2"}) {
    EXPECT_NE(s.find(want), std::string::npos) << "missing '" << want << "' in:\n" << s;
  }
}

TEST(TopologyCommandTest, ErrorsGoToErrWithExitCodeOne) {
  FakeTree t;
  TopologyCommandOptions o = SyntheticOptions(t);
  o.model_store = t.Path("nowhere");
  std::ostringstream out, err;
  EXPECT_EQ(RunTopologyCommand(o, out, err), 1);
  EXPECT_NE(err.str().find("nowhere"), std::string::npos);
  EXPECT_EQ(out.str(), "");

  o.model_store.clear();
  o.cpus = "x";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunTopologyCommand(o, out2, err2), 1);
  EXPECT_NE(err2.str().find("--cpus"), std::string::npos);
}

TEST(TopologyCommandTest, WithoutAnAnnotatorTheReportHasNoAnnotations) {
  FakeTree t;
  t.Write("store/a/config.yaml", kInputs);
  TopologyCommandOptions o = SyntheticOptions(t);
  o.model_store = t.Path("store");
  o.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunTopologyCommand(o, out, err), 0) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out.str()).get(doc), simdjson::SUCCESS) << out.str();
  EXPECT_EQ(doc["model_errors"].error(), simdjson::NO_SUCH_FIELD);
  auto model = doc["models"].get_array().at(0);
  EXPECT_EQ(model["batch_calibration"].error(), simdjson::NO_SUCH_FIELD) << out.str();
}

// An annotator that records what it was asked and fails for model "b".
struct RecordingAnnotator {
  std::vector<std::string> seen;  // model names, in the order asked
  ModelAnnotator get() {
    return [this](const config::ModelConfig& c, const PlannedModel& m, const CorePlan& plan) {
      EXPECT_EQ(c.name, m.name);
      EXPECT_EQ(plan.FindModel(m.name), &m);  // the plan's own entry
      seen.push_back(c.name);
      ModelAnnotation a;
      a.json_key = "extra";
      a.json_value = "{\"of\":\"" + c.name + "\"}";
      a.text = {"extra of " + c.name};
      if (c.name == "b") a.error = "model 'b': cannot load";
      return a;
    };
  }
};

TEST(TopologyCommandTest, AnnotationsJoinTheirModelsAndFailuresExitTwo) {
  FakeTree t;
  t.Write("store/a/config.yaml", kInputs);
  t.Write("store/b/config.yaml", kInputs);
  t.Write("store/broken/config.yaml", "max_batch_size: lots\n");
  TopologyCommandOptions o = SyntheticOptions(t);
  o.model_store = t.Path("store");
  o.json = true;
  RecordingAnnotator annotator;
  std::ostringstream out, err;
  EXPECT_EQ(RunTopologyCommand(o, out, err, annotator.get()), 2) << err.str();
  EXPECT_EQ(annotator.seen, (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(err.str().find("model 'b': cannot load"), std::string::npos) << err.str();

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out.str()).get(doc), simdjson::SUCCESS) << out.str();
  auto models = doc["models"].get_array();
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(std::string_view(models.at(0)["extra"]["of"]), "a");
  EXPECT_EQ(std::string_view(models.at(1)["extra"]["of"]), "b");
  std::vector<std::string> errors;
  for (auto e : doc["model_errors"].get_array()) errors.emplace_back(std::string_view(e));
  ASSERT_EQ(errors.size(), 2u) << out.str();  // the config left out, then the load
  EXPECT_NE(errors[0].find("broken"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], "model 'b': cannot load");

  o.json = false;
  std::ostringstream text, err2;
  EXPECT_EQ(RunTopologyCommand(o, text, err2, annotator.get()), 2);
  const std::string s = text.str();
  EXPECT_NE(s.find("\n    extra of a\n"), std::string::npos) << s;
  EXPECT_LT(s.find("extra of a"), s.find("  b: instances")) << s;
  EXPECT_NE(s.find("Error: model 'b': cannot load"), std::string::npos) << s;
}

TEST(TopologyCommandTest, AnnotationsThatAllSucceedExitZero) {
  FakeTree t;
  t.Write("store/a/config.yaml", kInputs);
  TopologyCommandOptions o = SyntheticOptions(t);
  o.model_store = t.Path("store");
  o.json = true;
  RecordingAnnotator annotator;
  std::ostringstream out, err;
  EXPECT_EQ(RunTopologyCommand(o, out, err, annotator.get()), 0) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out.str()).get(doc), simdjson::SUCCESS) << out.str();
  EXPECT_EQ(doc["model_errors"].get_array().size(), 0u);
}

}  // namespace
}  // namespace inferd::topology
