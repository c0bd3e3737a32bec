#include <gtest/gtest.h>

#include "sim/error.h"
#include "spec_helpers.h"
#include "topology/cluster.h"
#include "topology/describe.h"

namespace dtsim::topology {
namespace {

using testing::hgx;
using testing::one_nic_nodes;

int count(const Cluster& c, DeviceKind k) {
  int n = 0;
  for (const Device& d : c.devices()) n += d.kind == k;
  return n;
}

TEST(FatTree, ThreeTierRadix4Has16HostsAnd20Switches) {
  auto c = build_cluster(one_nic_nodes(16, FabricKind::fat_tree, 4, 3));
  EXPECT_EQ(count(*c, DeviceKind::nic), 16);
  EXPECT_EQ(count(*c, DeviceKind::network_switch), 20);
  ClusterSummary s = summarize(*c);
  EXPECT_EQ(s.switches_per_tier, (std::vector<int>{8, 8, 4}));
}

TEST(FatTree, ThreeTierRadix4RejectsA17thHost) {
  EXPECT_THROW(build_cluster(one_nic_nodes(17, FabricKind::fat_tree, 4, 3)), InputError);
}

TEST(FatTree, TwoTierRadix64Holds2048Hosts) {
  auto c = build_cluster(hgx(256, FabricKind::fat_tree, 64, 2));  // 256 nodes x 8 NICs
  EXPECT_EQ(count(*c, DeviceKind::nic), 2048);
  EXPECT_EQ(summarize(*c).switches_per_tier, (std::vector<int>{64, 32}));
}

TEST(FatTree, TooSmallFabricNamesTheTiersAndRadixThatWould) {
  try {
    build_cluster(hgx(512, FabricKind::fat_tree, 64, 2));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.fabric.radix");
    EXPECT_NE(
        e.message().find("a 2-tier fat-tree of radix 64 holds at most 2048 NIC ports; 4096 needed"),
        std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("use tiers: 3 or radix >= 92"), std::string::npos) << e.what();
  }
}

TEST(FatTree, NodesNicsFillLeavesInOrder) {
  auto c =
      build_cluster(hgx(8, FabricKind::fat_tree, 16, 2));  // 8 down ports a leaf: a node a leaf
  for (const Link& l : c->links()) {
    const Device& from = c->device(l.from);
    if (from.kind != DeviceKind::nic) continue;
    if (l.kind != LinkKind::network) continue;
    EXPECT_EQ(c->device(l.to).name, "leaf" + std::to_string(from.node)) << from.name;
  }
}

TEST(FatTree, BisectionOfFullFatTreeIsHalfTheHostsAtLinkRate) {
  auto c = build_cluster(one_nic_nodes(48, FabricKind::fat_tree, 12, 2));
  EXPECT_DOUBLE_EQ(summarize(*c).bisection_bandwidth.gbytes_per_s(), 24 * 50.0);
}

TEST(FatTree, BisectionHalvesAtTwoToOneOversubscription) {
  auto full = build_cluster(one_nic_nodes(48, FabricKind::fat_tree, 12, 2, 1));
  auto half = build_cluster(one_nic_nodes(48, FabricKind::fat_tree, 12, 2, 2));
  ClusterSummary a = summarize(*full);
  ClusterSummary b = summarize(*half);
  EXPECT_DOUBLE_EQ(b.bisection_bandwidth.gbytes_per_s(), a.bisection_bandwidth.gbytes_per_s() / 2);
  EXPECT_DOUBLE_EQ(a.oversubscription, 1);
  EXPECT_DOUBLE_EQ(b.oversubscription, 2);
}

TEST(FatTree, ThreeTierBisectionIsFullAcrossPods) {
  auto c = build_cluster(one_nic_nodes(16, FabricKind::fat_tree, 4, 3));
  EXPECT_DOUBLE_EQ(summarize(*c).bisection_bandwidth.gbytes_per_s(), 8 * 50.0);
}

TEST(SingleSwitch, TooManyPortsIsAnInputErrorNamingTheRadix) {
  try {
    build_cluster(hgx(9, FabricKind::single_switch, 64));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("radix >= 72"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtsim::topology
