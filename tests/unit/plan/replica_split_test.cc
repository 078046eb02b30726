#include "plan/replica_split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::plan {
namespace {

NodeShape Shape16() {
  NodeShape s;
  s.cores = 16;
  s.memory_bytes = 64LL << 30;
  s.headroom = 0.2;  // usable: 12.8 cores, 51.2 GiB
  return s;
}

ModelDemand Model(std::string name, double rps, double core_ms, int64_t memory, int line = 2) {
  ModelDemand m;
  m.name = std::move(name);
  m.rps = rps;
  m.core_ms = core_ms;
  m.memory_bytes = memory;
  m.line = line;
  return m;
}

TEST(ReplicaSplitTest, AModelPastANodeBecomesTheFewestReplicasThatFit) {
  // 3000 rps x 10 ms = 30 cores: 12.8 usable per node -> 3 replicas of 10 cores.
  auto items = SplitIntoReplicas(
      {Model("small", 10, 10, 1 << 20), Model("hot", 3000, 10, 2LL << 30)}, Shape16(), "f.yaml");
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 4u);
  EXPECT_EQ((*items)[0].replicas, 1);
  EXPECT_DOUBLE_EQ((*items)[0].cores, 0.1);
  for (int r = 0; r < 3; ++r) {
    const PackItem& it = (*items)[1 + r];
    EXPECT_EQ(it.model, 1);
    EXPECT_EQ(it.replica, r);
    EXPECT_EQ(it.replicas, 3);
    EXPECT_DOUBLE_EQ(it.cores, 10);
    EXPECT_DOUBLE_EQ(it.rps, 1000);
    EXPECT_EQ(it.memory_bytes, 2LL << 30);              // each replica holds a copy
    EXPECT_GT(it.cores, Shape16().usable_cores() / 2);  // two never share a node
  }
}

TEST(ReplicaSplitTest, ExactlyTheUsableCoresIsOneReplica) {
  auto items = SplitIntoReplicas({Model("edge", 1280, 10, 1)}, Shape16(), "f.yaml");
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), 1u);
}

TEST(ReplicaSplitTest, AModelWhoseMemoryFitsNoNodeNamesItsLine) {
  auto items = SplitIntoReplicas({Model("a", 1, 1, 1), Model("huge", 1, 1, 60LL << 30, 7)},
                                 Shape16(), "f.yaml");
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(items.status().message(),
              ::testing::HasSubstr("f.yaml:7: model 'huge': fits on no node even alone"));
}

TEST(LowerBoundTest, TheLargerOfTheCoreAndMemoryVolumes) {
  // 20 models of 1.28 cores (1/10 node) and 5.12 GiB (1/10 node), plus one of
  // 0 cores and 51.2 GiB: cores fill 2 nodes, memory 3.
  std::vector<ModelDemand> models;
  for (int i = 0; i < 20; ++i)
    models.push_back(Model("m" + std::to_string(i), 128, 10, 5497558139));
  models.push_back(Model("cold", 0, 10, 54975581388));
  auto items = SplitIntoReplicas(models, Shape16(), "f.yaml");
  ASSERT_TRUE(items.ok());
  LowerBound lb = ComputeLowerBound(*items, Shape16());
  EXPECT_NEAR(lb.core_nodes, 2.0, 1e-9);
  EXPECT_NEAR(lb.memory_nodes, 3.0, 1e-6);
  EXPECT_EQ(lb.nodes, 3);
}

TEST(NodeShapeTest, RefusesShapesWithoutRoom) {
  NodeShape s = Shape16();
  EXPECT_TRUE(ValidateNodeShape(s).ok());
  s.headroom = 1;
  EXPECT_FALSE(ValidateNodeShape(s).ok());
  s = Shape16();
  s.cores = 0;
  EXPECT_FALSE(ValidateNodeShape(s).ok());
  s = Shape16();
  s.memory_bytes = 0;
  EXPECT_FALSE(ValidateNodeShape(s).ok());
}

}  // namespace
}  // namespace inferd::plan
