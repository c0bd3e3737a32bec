#include <gtest/gtest.h>

#include <set>

#include "sim/error.h"
#include "spec_helpers.h"
#include "topology/cluster.h"
#include "topology/describe.h"

namespace dtsim::topology {
namespace {

using testing::hgx;
using testing::one_nic_nodes;

// The fabric device a NIC's network link goes to.
const Device& attached_switch(const Cluster& c, DeviceId nic) {
  for (const Link& l : c.links()) {
    if (l.from == nic && l.kind == LinkKind::network) return c.device(l.to);
  }
  throw std::logic_error("NIC has no network link");
}

TEST(RailOptimized, NodesNicIReachesRailSwitchI) {
  auto c = build_cluster(hgx(8, FabricKind::rail_optimized, 64, 2));
  for (DeviceId d = 0; d < c->devices().size(); ++d) {
    const Device& nic = c->device(d);
    if (nic.kind != DeviceKind::nic) continue;
    EXPECT_EQ(attached_switch(*c, d).name, "su0/rail" + std::to_string(nic.local)) << nic.name;
  }
}

TEST(RailOptimized, NodesBeyondOneUnitGetTheirOwnRailSwitches) {
  auto c = build_cluster(hgx(40, FabricKind::rail_optimized, 64, 2));  // 32 nodes a unit
  DeviceId nic = 0;
  for (DeviceId d = 0; d < c->devices().size(); ++d) {
    if (c->device(d).name == "node33/nic5") nic = d;
  }
  EXPECT_EQ(attached_switch(*c, nic).name, "su1/rail5");
}

// An NVL72 rack's 72 rails need 72 rail switches in its one scalable unit; radix-64 spines reach
// 64. The message says that, not that the fabric "holds at most 0 nodes".
TEST(RailOptimized, MoreRailsThanTheSpinesReachIsNamedAsSuch) {
  ClusterSpec s = *find_node_preset("gb200-nvl72");
  s.nodes = 2;
  s.fabric.kind = FabricKind::rail_optimized;
  s.fabric.radix = 64;
  s.fabric.tiers = 2;
  try {
    build_cluster(s);
    FAIL() << "built";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a 2-tier rail-optimized fabric of radix 64 has room for 64 rail switches, "
                                         "fewer than the 72 rails (NICs a node) one scalable unit needs: use tiers: 3 "
                                         "or radix >= 72"),
              std::string::npos)
        << e.what();
  }
}

TEST(RailOptimized, OneTierIsRejectedBecauseRailsNeedSpines) {
  EXPECT_THROW(build_cluster(hgx(4, FabricKind::rail_optimized, 64, 1)), InputError);
}

TEST(Torus, SixteenNodesMakeAFourByFourTorus) {
  ClusterSpec s = one_nic_nodes(16, FabricKind::torus, 8, 2);
  s.fabric.torus_dims = 2;
  auto c = build_cluster(s);
  ClusterSummary sum = summarize(*c);
  EXPECT_EQ(sum.switches, 16);
  // 16 routers x 2 dimensions neighbour links + 16 NIC links.
  EXPECT_EQ(sum.network_links, 16 * 2 + 16);
  std::set<std::string> names;
  for (const Device& d : c->devices()) {
    if (d.kind == DeviceKind::network_switch) names.insert(d.name);
  }
  EXPECT_TRUE(names.count("torus/3.3"));
}

TEST(Torus, OppositeCornersHaveAllMinimalPaths) {
  ClusterSpec s = one_nic_nodes(16, FabricKind::torus, 8, 2);
  auto c = build_cluster(s);
  // From (0,0) to (2,2) on a 4x4 torus: 2 hops each way in each dimension, both ways round:
  // 2 x 2 directions, C(4,2) = 6 orders each.
  EXPECT_EQ(c->path_count(0, 10), 24u);
}

TEST(Torus, ThreeDimensionsFactorEvenly) {
  ClusterSpec s = one_nic_nodes(27, FabricKind::torus, 8, 2);
  s.fabric.torus_dims = 3;
  auto c = build_cluster(s);
  std::set<std::string> names;
  for (const Device& d : c->devices()) names.insert(d.name);
  EXPECT_TRUE(names.count("torus/2.2.2"));
}

TEST(Dragonfly, GroupsAreFullyConnectedAndGloballyLinked) {
  ClusterSpec s = one_nic_nodes(64, FabricKind::dragonfly, 16, 2);  // p=4, a=8, h=4
  auto c = build_cluster(s);
  ClusterSummary sum = summarize(*c);
  EXPECT_EQ(sum.switches, 16);  // 2 groups of 8 routers
  // 2 x C(8,2) local + 8*4/1 global + 64 NIC links.
  EXPECT_EQ(sum.network_links, 2 * 28 + 32 + 64);
}

TEST(Dragonfly, MinimalRouteBetweenGroupsIsLocalGlobalLocal) {
  ClusterSpec s = one_nic_nodes(64, FabricKind::dragonfly, 16, 2);
  s.fabric.dragonfly_groups = 4;  // 4 routers a group, each pair of groups joined by 5 links
  auto c = build_cluster(s);
  for (const auto& path : c->equal_cost_paths(0, 63, 100)) {
    int network = 0;
    for (LinkId l : path) network += c->link(l).kind == LinkKind::network;
    EXPECT_LE(network, 5);  // NIC, local, global, local, NIC
  }
}

TEST(Dragonfly, TooManyPortsNamesALargerRadix) {
  try {
    build_cluster(hgx(1000, FabricKind::dragonfly, 8));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("use radix >= "), std::string::npos) << e.what();
  }
}

TEST(ScaleUp, NvswitchNodeWiresEveryGpuToTheSwitch) {
  auto c = build_cluster(hgx(1, FabricKind::fat_tree));
  int nvlinks = 0;
  for (const Link& l : c->links()) nvlinks += l.kind == LinkKind::nvlink;
  EXPECT_EQ(nvlinks, 2 * 8);
  EXPECT_EQ(summarize(*c).nvswitches, 1);
}

TEST(ScaleUp, Nvl72IsOneDomainOf72Gpus) {
  ClusterSpec s = *find_node_preset("gb200-nvl72");
  s.nodes = 1;
  auto c = build_cluster(s);
  EXPECT_EQ(c->gpu_count(), 72);
  EXPECT_EQ(summarize(*c).nvswitches, 1);
  auto r = c->route(0, 71);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(c->link(r[0]).kind, LinkKind::nvlink);
}

TEST(ScaleUp, NvlinkBridgePairsGoOverTheBridgeOthersOverPcie) {
  ClusterSpec s = *find_node_preset("pcie-server");
  s.nodes = 1;
  s.scale_up.kind = ScaleUpKind::nvlink_bridge;
  s.scale_up.bandwidth = Bandwidth::gbytes_per_s(56);
  auto c = build_cluster(s);
  auto bridged = c->route(2, 3);
  ASSERT_EQ(bridged.size(), 1u);
  EXPECT_EQ(c->link(bridged[0]).kind, LinkKind::nvlink);
  for (LinkId l : c->route(0, 5)) EXPECT_EQ(c->link(l).kind, LinkKind::pcie);
}

TEST(ScaleUp, PcieGpusOnOneSwitchMeetThereOthersCrossTheCpus) {
  ClusterSpec s = *find_node_preset("pcie-server");
  s.nodes = 1;
  auto c = build_cluster(s);
  EXPECT_EQ(c->route(0, 3).size(), 2u);  // gpu -> pcie0 -> gpu
  auto far = c->route(0, 7);             // gpu -> pcie0 -> cpu0 -> cpu1 -> pcie1 -> gpu
  EXPECT_EQ(far.size(), 5u);
  EXPECT_EQ(c->device(c->link(far[1]).to).kind, DeviceKind::host);
}

TEST(ScaleUp, NoneSendsThroughTheHost) {
  ClusterSpec s = *find_node_preset("pcie-server");
  s.nodes = 1;
  s.scale_up.kind = ScaleUpKind::none;
  auto c = build_cluster(s);
  auto r = c->route(0, 1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(c->device(c->link(r[0]).to).kind, DeviceKind::host);
}

TEST(ScaleUp, NicSitsOnThePcieSwitchOfItsGpu) {
  ClusterSpec s = *find_node_preset("pcie-server");  // 8 GPUs, 2 NICs: NIC 1 near GPU 4
  s.nodes = 1;
  auto c = build_cluster(s);
  for (const Link& l : c->links()) {
    if (c->device(l.from).name == "node0/nic1") {
      EXPECT_EQ(c->device(l.to).name, "node0/pcie1");
    }
  }
}

}  // namespace
}  // namespace dtsim::topology

namespace dtsim::topology {
namespace {

TEST(NicCable, RunsAtTheSlowerOfNicAndFabricLink) {
  ClusterSpec s = testing::hgx(2, FabricKind::single_switch);
  s.nic.bandwidth = Bandwidth::gbps(200);
  auto c = build_cluster(s);
  for (const Link& l : c->links()) {
    if (l.kind == LinkKind::network) {
      EXPECT_EQ(l.bandwidth, Bandwidth::gbps(200));
    }
  }
}

}  // namespace
}  // namespace dtsim::topology
