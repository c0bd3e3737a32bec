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

}  // namespace dtsim::topology::testing
