#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "report/cluster_bill.h"
#include "report/pareto.h"
#include "report/sweep_table.h"
#include "sim/error.h"

namespace dtsim::report {
namespace {

topology::ClusterSpec cluster(int nodes, topology::FabricKind kind, double oversub) {
  topology::ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.nic.count = 8;
  c.fabric.kind = kind;
  c.fabric.radix = 64;
  c.fabric.tiers = 2;
  c.fabric.oversubscription = oversub;
  return c;
}

TEST(ClusterBill, NonBlockingTwoTierFatTreeHalvesLeafPorts) {
  // 128 nodes x 8 NICs = 1024 ports; leaves take 32 hosts and 32 uplinks: 32 leaves, 16 spines.
  const ClusterBill b = count_cluster(cluster(128, topology::FabricKind::fat_tree, 1));
  EXPECT_EQ(b.gpus, 1024);
  EXPECT_EQ(b.nics, 1024);
  EXPECT_EQ(b.switches, 32 + 16);
  EXPECT_EQ(b.links, 1024 + 32 * 32);
}

TEST(ClusterBill, OversubscriptionNeedsFewerSwitchesAndLinks) {
  const ClusterBill full = count_cluster(cluster(128, topology::FabricKind::fat_tree, 1));
  const ClusterBill two = count_cluster(cluster(128, topology::FabricKind::fat_tree, 2));
  const ClusterBill four = count_cluster(cluster(128, topology::FabricKind::fat_tree, 4));
  EXPECT_LT(two.switches, full.switches);
  EXPECT_LT(four.switches, two.switches);
  EXPECT_LT(four.links, two.links);
  EXPECT_EQ(two.gpus, full.gpus);
}

TEST(ClusterBill, SingleNodeNeedsNoFabric) {
  const ClusterBill b = count_cluster(cluster(1, topology::FabricKind::fat_tree, 1));
  EXPECT_EQ(b.switches, 0);
  EXPECT_EQ(b.links, 0);
  EXPECT_EQ(b.gpus, 8);
}

TEST(ClusterBill, TorusIsSwitchless) {
  auto c = cluster(64, topology::FabricKind::torus, 1);
  c.fabric.torus_dims = 3;
  const ClusterBill b = count_cluster(c);
  EXPECT_EQ(b.switches, 0);
  EXPECT_EQ(b.links, 64 * 3);
}

TEST(Price, SumsCountsTimesPrices) {
  ClusterBill b{.gpus = 16, .nics = 16, .switches = 2, .links = 20};
  config::CostModel m;
  m.gpu_usd = 10;
  m.switch_usd = 100;
  m.nic_usd = 1;
  m.link_usd = 2;
  m.optics_usd = 3;
  m.gpu_w = 700;
  m.switch_w = 1000;
  m.nic_w = 20;
  m.optics_w = 5;
  const PointCost c = price(b, m);
  EXPECT_DOUBLE_EQ(c.capex_usd, 16 * 10 + 2 * 100 + 16 * 1 + 20 * (2 + 2 * 3));
  EXPECT_DOUBLE_EQ(c.power_w, 16 * 700 + 2 * 1000 + 16 * 20 + 20 * 2 * 5);
}

TEST(ParetoFront, KeepsPointsNoOtherBeatsOnBoth) {
  const std::vector<double> time = {10, 8, 9, 5, 12};
  const std::vector<double> cost = {1, 2, 3, 4, 1};
  // (9,3) is beaten by (8,2); (12,1) by (10,1).
  EXPECT_EQ(pareto_front(time, cost), (std::vector<bool>{true, true, false, true, false}));
}

TEST(ParetoFront, EqualPointsAreBothOnTheFront) {
  const std::vector<double> time = {3, 3};
  const std::vector<double> cost = {1, 1};
  EXPECT_EQ(pareto_front(time, cost), (std::vector<bool>{true, true}));
}

TEST(ParetoFront, NanIsNeverOnTheFront) {
  const std::vector<double> time = {std::nan(""), 4};
  const std::vector<double> cost = {0, 5};
  EXPECT_EQ(pareto_front(time, cost), (std::vector<bool>{false, true}));
}

SweepTable table() {
  SweepTable t;
  t.sweep_file = "sweeps/a.yaml";
  t.base_file = "base.yaml";
  t.base_scenario = "name: base\ncluster:\n  nodes: 4\n";
  t.varied_keys = {"cluster.nodes", "cluster.fabric.kind"};
  t.rows = {
      {0, {"4", "fat-tree"}, {{"iteration_time_s", 2.5}, {"mfu", 0.41}}, 1e6, 9000, false, ""},
      {1, {"8", "rail,optimized"}, {{"iteration_time_s", 1.25}}, 2e6, 18000, false, ""},
      {2, {"16", "fat-tree"}, {}, 4e6, 36000, false, "x.yaml:3: cluster.nodes: \"too many\""}};
  mark_pareto(t);
  return t;
}

std::string csv(const SweepTable& t) {
  std::ostringstream os;
  write_sweep_csv(t, os);
  return os.str();
}

TEST(SweepTable, CsvStartsWithSchemaVersionAndBase) {
  const std::string text = csv(table());
  EXPECT_EQ(text.rfind("# schema_version: 1\n# sweep: sweeps/a.yaml\n# base: base.yaml\n", 0), 0u);
  EXPECT_NE(text.find("#   cluster:\n#     nodes: 4\n"), std::string::npos);
  EXPECT_NE(text.find("\npoint,cluster.nodes,cluster.fabric.kind,iteration_time_s,mfu,capex_usd,"
                      "power_w,pareto,error\n"),
            std::string::npos);
}

TEST(SweepTable, ParetoMarksFastestAndCheapestButNotFailedRows) {
  const SweepTable t = table();
  EXPECT_TRUE(t.rows[0].pareto);
  EXPECT_TRUE(t.rows[1].pareto);
  EXPECT_FALSE(t.rows[2].pareto);
}

TEST(SweepTable, APointThatDoesNotFitInMemoryIsNotOnTheFront) {
  SweepTable t = table();
  // The fastest point needs more HBM than the GPU has: the cheaper one is the only choice.
  t.rows[1].metrics.emplace_back("memory_fits", 0);
  t.rows[0].metrics.emplace_back("memory_fits", 1);
  mark_pareto(t);
  EXPECT_TRUE(t.rows[0].pareto);
  EXPECT_FALSE(t.rows[1].pareto);
}

TEST(SweepTable, ReadingBackGivesTheSameTable) {
  const SweepTable t = table();
  std::istringstream in(csv(t));
  const SweepTable back = read_sweep_csv(in, "t.csv");
  EXPECT_EQ(back.varied_keys, t.varied_keys);
  EXPECT_EQ(back.base_scenario, t.base_scenario);
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_EQ(back.rows[1].values[1], "rail,optimized");
  EXPECT_EQ(back.rows[2].error, t.rows[2].error);
  EXPECT_EQ(csv(back), csv(t));
}

TEST(SweepTable, MetricColumnsFollowFirstAppearanceByIndex) {
  EXPECT_EQ(table().metric_names(), (std::vector<std::string>{"iteration_time_s", "mfu"}));
}

TEST(SweepTable, TimeMetricIsTheFirstNamedTime) {
  EXPECT_EQ(time_metric({"mfu", "iteration_time_s"}), "iteration_time_s");
  EXPECT_EQ(time_metric({"busbw_GBps"}), "busbw_GBps");
  EXPECT_EQ(time_metric({}), std::nullopt);
}

TEST(SweepTable, OtherSchemaVersionIsAnError) {
  std::istringstream in(
      "# schema_version: 99\n# varied_keys: a\npoint,a,capex_usd,power_w,pareto,error\n");
  EXPECT_THROW(read_sweep_csv(in, "t.csv"), InputError);
}

TEST(SweepTable, RowWithWrongFieldCountIsAnErrorAtItsLine) {
  std::string text = csv(table());
  text += "3,32\n";
  std::istringstream in(text);
  try {
    read_sweep_csv(in, "t.csv");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "t.csv");
    EXPECT_GT(e.where().line, 5);
  }
}

}  // namespace
}  // namespace dtsim::report
