// Small cluster specs the topology tests build: one GPU and one NIC per node makes fabric
// "hosts" and nodes the same thing, as in the textbook fat-tree counts.
#pragma once

#include "topology/catalog.h"
#include "topology/cluster_spec.h"

namespace dtsim::topology::testing {

inline ClusterSpec one_nic_nodes(int nodes, FabricKind kind, int radix, int tiers,
                                 double oversub = 1) {
  ClusterSpec s = *find_node_preset("hgx-h100");
  s.nodes = nodes;
  s.gpus_per_node = 1;
  s.nic.count = 1;
  s.fabric.kind = kind;
  s.fabric.radix = radix;
  s.fabric.tiers = tiers;
  s.fabric.oversubscription = oversub;
  return s;
}

inline ClusterSpec hgx(int nodes, FabricKind kind, int radix = 64, int tiers = 2) {
  ClusterSpec s = *find_node_preset("hgx-h100");
  s.nodes = nodes;
  s.fabric.kind = kind;
  s.fabric.radix = radix;
  s.fabric.tiers = tiers;
  return s;
}

// 8 one-GPU nodes on a radix-4 2-tier fat-tree: 4 leaves of two nodes under 2 spines, so a
// transfer between leaves has two equal-cost routes and hashed ECMP can put two on one uplink.
inline ClusterSpec two_spine_fat_tree(Routing routing) {
  ClusterSpec s = one_nic_nodes(8, FabricKind::fat_tree, 4, 2);
  s.fabric.routing = routing;
  return s;
}

}  // namespace dtsim::topology::testing
