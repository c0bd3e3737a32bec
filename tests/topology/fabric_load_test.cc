// pattern_rates against loads worked out by hand on small tori and dragonflies of HGX H100 nodes
// (8 NICs of 400 Gb/s a node, 400 Gb/s router links: 50 GB/s each way).
#include <gtest/gtest.h>

#include <cmath>

#include "spec_helpers.h"
#include "topology/cluster.h"
#include "topology/fabric_load.h"

namespace dtsim::topology {
namespace {

using testing::hgx;

// 8 nodes make a 4 x 2 torus. Consecutive nodes of a row are joined by one link, which every
// channel of the ring between them crosses: 50 GB/s a node. In an all-to-all a node sends one
// unit to each of 7 others; on the 4-node rings along x each link carries 2 units a destination
// row (one unit from a neighbour, and half of each 2-hop unit of the two nodes behind it), for 2
// rows: 4 units. 7 units in the time a link carries 4 is 7/4 x 50 = 87.5 GB/s. A 2-node row
// along y has two parallel links and half that load, so x sets the pace.
TEST(PatternRates, TorusRingCrossesOneRouterLinkAndAllToAllItsXRings) {
  auto c = build_cluster(hgx(8, FabricKind::torus, 128));
  const PatternRates r = pattern_rates(*c, 8);
  EXPECT_NEAR(r.ring, 50.0, 1e-9);
  EXPECT_NEAR(r.uniform, 87.5, 1e-9);
  EXPECT_GT(r.tree, 0.0);
  EXPECT_LT(r.tree, 8 * 50.0);
}

// 2 x 2 x 2: every neighbour is joined twice (the wrap-around link is a second link to the same
// router), so the ring has two links to share.
TEST(PatternRates, TwoWideTorusDimensionsGiveTheRingTwoParallelLinks) {
  ClusterSpec s = hgx(8, FabricKind::torus, 128);
  s.fabric.torus_dims = 3;
  auto c = build_cluster(s);
  EXPECT_NEAR(pattern_rates(*c, 8).ring, 100.0, 1e-9);
}

// Radix 32: 8 NIC ports a router, so each node has a router of its own, and 8 routers fit in one
// group wired all-to-all. The ring crosses one local link a hop; an all-to-all sends each pair
// over its own link, 7 units a node in the time a link carries one: 350 GB/s.
TEST(PatternRates, DragonflyGroupGivesEveryPairOfNodesItsOwnLink) {
  auto c = build_cluster(hgx(8, FabricKind::dragonfly, 32));
  const PatternRates r = pattern_rates(*c, 8);
  EXPECT_NEAR(r.ring, 50.0, 1e-9);
  EXPECT_NEAR(r.uniform, 350.0, 1e-9);
}

// A job on the first two nodes of the torus only loads the link between them, whatever the rest.
TEST(PatternRates, AJobOnFewerNodesLoadsOnlyTheirLinks) {
  auto c = build_cluster(hgx(8, FabricKind::torus, 128));
  const PatternRates r = pattern_rates(*c, 2);
  EXPECT_NEAR(r.ring, 50.0, 1e-9);     // node 0 -> 1 over the x link, 1 -> 0 over the other way
  EXPECT_NEAR(r.uniform, 50.0, 1e-9);  // the same two directions
  EXPECT_NEAR(r.tree, 50.0, 1e-9);     // both trees are that one edge: half the bytes each
}

// The same loads on a Clos, where the answer is known without them: a non-blocking fat-tree never
// holds a node below its NICs (400 GB/s), and 2:1 oversubscribed leaves halve what leaves them.
// 16 nodes on radix-16 leaves: 8 NIC ports down, so a node a leaf and every byte goes up.
TEST(PatternRates, NonBlockingFatTreeNeverCapsANodeAndOversubscriptionHalvesIt) {
  auto full = build_cluster(hgx(16, FabricKind::fat_tree, 16, 2));
  const PatternRates r = pattern_rates(*full, 16);
  EXPECT_GE(r.ring, 400.0 - 1e-6);
  EXPECT_GE(r.tree, 400.0 - 1e-6);
  EXPECT_NEAR(r.uniform, 400.0, 1e-6);  // every byte crosses a leaf's 8 uplinks, evenly
  ClusterSpec half = hgx(16, FabricKind::fat_tree, 24, 2);
  half.fabric.oversubscription = 2;  // radix 24: 16 ports down (two nodes), 8 up
  auto os = build_cluster(half);
  // 15 units a node, 14 of them leaving its leaf: 28 over 8 uplinks of 50 GB/s.
  EXPECT_NEAR(pattern_rates(*os, 16).uniform, 15.0 / (28.0 / 8 / 50), 1e-6);
}

// Nodes behind one switch cross no switch-to-switch link.
TEST(PatternRates, NodesOnOneSwitchAreNotLimited) {
  auto c = build_cluster(hgx(2, FabricKind::single_switch));
  const PatternRates r = pattern_rates(*c, 2);
  EXPECT_TRUE(std::isinf(r.ring));
  EXPECT_TRUE(std::isinf(r.uniform));
  EXPECT_TRUE(std::isinf(pattern_rates(*c, 1).ring));
}

}  // namespace
}  // namespace dtsim::topology
