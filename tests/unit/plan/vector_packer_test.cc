#include "plan/vector_packer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace inferd::plan {
namespace {

// A node of 10 cores and 10 GB with no headroom: shares are easy to read.
NodeShape Shape() {
  NodeShape s;
  s.cores = 10;
  s.memory_bytes = 10'000'000'000;
  s.headroom = 0;
  return s;
}

PackItem Item(int model, double cores, int64_t memory) {
  PackItem it;
  it.model = model;
  it.cores = cores;
  it.rps = cores * 100;
  it.memory_bytes = memory;
  return it;
}

// The optimum by enumerating every assignment (restricted growth strings):
// independent of the packer's code, usable up to ~9 items.
int BruteForceOptimum(const std::vector<PackItem>& items, const NodeShape& shape) {
  const size_t n = items.size();
  int best = static_cast<int>(n);
  std::vector<double> cores;
  std::vector<int64_t> memory;
  std::function<void(size_t)> go = [&](size_t i) {
    if (static_cast<int>(cores.size()) >= best) return;
    if (i == n) {
      best = static_cast<int>(cores.size());
      return;
    }
    for (size_t b = 0; b < cores.size(); ++b) {
      if (cores[b] + items[i].cores <= shape.usable_cores() * (1 + 1e-9) &&
          memory[b] + items[i].memory_bytes <= shape.usable_memory()) {
        cores[b] += items[i].cores;
        memory[b] += items[i].memory_bytes;
        go(i + 1);
        cores[b] -= items[i].cores;
        memory[b] -= items[i].memory_bytes;
      }
    }
    cores.push_back(items[i].cores);
    memory.push_back(items[i].memory_bytes);
    go(i + 1);
    cores.pop_back();
    memory.pop_back();
  };
  go(0);
  return best;
}

TEST(VectorPackerTest, BeatsFirstFitDecreasingWhereItIsKnownToFail) {
  // Cores 4.5, 4.5, 3.5, 3.5, 2, 2 of 10: FFD puts 4.5+4.5 together and needs
  // 3 nodes; {4.5, 3.5, 2} twice fills exactly 2.
  std::vector<PackItem> items;
  int m = 0;
  for (double c : {4.5, 4.5, 3.5, 3.5, 2.0, 2.0}) items.push_back(Item(m++, c, 1'000'000));
  PackOptions no_exact;
  no_exact.exact_max_items = 0;
  Packing p = PackItems(items, Shape(), no_exact);
  EXPECT_EQ(p.first_fit_nodes, 3);
  EXPECT_EQ(p.nodes.size(), 2u) << p.method;
  EXPECT_TRUE(p.optimal);
  EXPECT_TRUE(CheckPacking(p, items, Shape()).ok());
}

TEST(VectorPackerTest, PairsCoreHeavyWithMemoryHeavyModels) {
  // Four core-heavy (7 cores, 2 GB) and four memory-heavy (2 cores, 7 GB):
  // each node takes one of each; 4 nodes, where either dimension alone says 4.
  std::vector<PackItem> items;
  for (int i = 0; i < 4; ++i) items.push_back(Item(i, 7, 2'000'000'000));
  for (int i = 4; i < 8; ++i) items.push_back(Item(i, 2, 7'000'000'000));
  Packing p = PackItems(items, Shape());
  EXPECT_EQ(p.nodes.size(), 4u);
  for (const NodeLoad& n : p.nodes) EXPECT_EQ(n.items.size(), 2u);
  EXPECT_TRUE(CheckPacking(p, items, Shape()).ok());
}

TEST(VectorPackerTest, MatchesTheBruteForceOptimumOnSmallRandomSets) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> cores(0.2, 7.0);
  std::uniform_int_distribution<int64_t> memory(100'000'000, 7'000'000'000);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 3 + trial % 7;  // 3..9 items
    std::vector<PackItem> items;
    for (int i = 0; i < n; ++i) items.push_back(Item(i, cores(rng), memory(rng)));
    Packing p = PackItems(items, Shape());
    ASSERT_TRUE(CheckPacking(p, items, Shape()).ok());
    ASSERT_EQ(static_cast<int>(p.nodes.size()), BruteForceOptimum(items, Shape()))
        << "trial " << trial << ": " << p.method;
    EXPECT_TRUE(p.optimal);
  }
}

TEST(VectorPackerTest, WithoutTheExactSearchStillNearTheOptimumOnSmallSets) {
  // The heuristics alone (no branch and bound) on the same kind of sets: at
  // most one node over the optimum, and usually on it.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> cores(0.2, 7.0);
  std::uniform_int_distribution<int64_t> memory(100'000'000, 7'000'000'000);
  PackOptions no_exact;
  no_exact.exact_max_items = 0;
  int on_optimum = 0;
  const int trials = 200;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<PackItem> items;
    for (int i = 0; i < 9; ++i) items.push_back(Item(i, cores(rng), memory(rng)));
    Packing p = PackItems(items, Shape(), no_exact);
    const int opt = BruteForceOptimum(items, Shape());
    ASSERT_LE(static_cast<int>(p.nodes.size()), opt + 1) << "trial " << trial;
    on_optimum += static_cast<int>(p.nodes.size()) == opt;
  }
  EXPECT_GE(on_optimum, trials * 8 / 10);
}

// Zipf rps, log-normal CPU time and memory, as tools/plan_models.py makes them.
std::vector<ModelDemand> ZipfLogNormal(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> core_ms(std::log(12.0), 0.7);
  std::lognormal_distribution<double> mib(std::log(400.0), 1.0);
  double h = 0;
  for (int k = 1; k <= n; ++k) h += 1.0 / k;
  std::vector<ModelDemand> models;
  for (int k = 1; k <= n; ++k) {
    ModelDemand m;
    m.name = "m" + std::to_string(k);
    m.rps = 11.0 * n / h / k;
    m.core_ms = core_ms(rng);
    m.memory_bytes = std::min<int64_t>(16LL << 30, static_cast<int64_t>(mib(rng) * 1048576));
    m.line = k + 1;
    models.push_back(m);
  }
  return models;
}

TEST(VectorPackerTest, ThousandsOfModelsWithinTenPercentOfTheLowerBound) {
  NodeShape shape;
  shape.cores = 16;
  shape.memory_bytes = 64LL << 30;
  shape.headroom = 0.2;
  auto items = SplitIntoReplicas(ZipfLogNormal(3000, 1), shape, "gen");
  ASSERT_TRUE(items.ok()) << items.status().message();
  Packing p = PackItems(*items, shape);
  ASSERT_TRUE(CheckPacking(p, *items, shape).ok()) << CheckPacking(p, *items, shape).message();
  const int lb = ComputeLowerBound(*items, shape).nodes;
  EXPECT_GE(static_cast<int>(p.nodes.size()), lb);
  EXPECT_LE(p.nodes.size(), std::ceil(lb * 1.10)) << "lower bound " << lb;
}

TEST(CheckPackingTest, CatchesEveryKindOfViolation) {
  const NodeShape shape = Shape();
  std::vector<PackItem> items = {Item(0, 6, 1), Item(0, 6, 1), Item(1, 1, 1)};
  items[0].replicas = items[1].replicas = 2;
  items[1].replica = 1;
  Packing over;
  over.nodes = {{{0, 1}, 12, 2}, {{2}, 1, 1}};
  EXPECT_THAT(CheckPacking(over, items, shape).message(), ::testing::HasSubstr("two replicas"));
  items[1].model = 2;
  EXPECT_THAT(CheckPacking(over, items, shape).message(), ::testing::HasSubstr("cores"));
  Packing missing;
  missing.nodes = {{{0}, 6, 1}, {{1}, 6, 1}};
  EXPECT_THAT(CheckPacking(missing, items, shape).message(),
              ::testing::HasSubstr("placed 0 times"));
  std::vector<PackItem> heavy = {Item(0, 1, 6'000'000'000), Item(1, 1, 6'000'000'000)};
  Packing memory;
  memory.nodes = {{{0, 1}, 2, 12'000'000'000}};
  EXPECT_THAT(CheckPacking(memory, heavy, shape).message(), ::testing::HasSubstr("bytes"));
}

}  // namespace
}  // namespace inferd::plan
