// Fabric load: how fast a node can drive each of the traffic patterns NCCL's collectives make
// when the fabric's switch-to-switch links, not its NICs, are the bottleneck, as on a torus or a
// dragonfly whose router links are thinner than the NICs feeding them. Each pattern's traffic is
// spread over the least-hop routes between the NICs it joins, every equal route carrying an
// equal share (what ECMP over many channels averages to, as the flow model routes them), and
// the busiest link sets the pace:
//   rate = (the most bytes one node sends) / (the most bytes one link carries / its bandwidth)
// The job is taken to sit on the cluster's first `nodes` nodes, in order.
//   PatternRates r = pattern_rates(cluster, 8);   // e.g. r.ring = 50 GB/s on a 2 x 4 torus
#pragma once

#include "topology/cluster.h"

namespace dtsim::topology {

// GB/s a node sends per direction (line rates of the links, no efficiency); infinite where the
// pattern crosses no switch-to-switch link (a single node, or nodes on one router).
struct PatternRates {
  // Ring: node i sends to node i + 1 (the last to the first), channel c leaving through GPU
  // c - 1's NIC and entering through GPU c's, as NCCL lays rings across the rails.
  double ring = 0;
  // NCCL's double binary tree over the nodes (position k's children 2k + 1 and 2k + 2; the
  // second tree mirrored), each tree carrying half the data up and down, NIC j to NIC j.
  double tree = 0;
  // Every node to every other (all_to_all with PXN: NIC j to NIC j).
  double uniform = 0;

  PatternRates scaled(double k) const { return {ring * k, tree * k, uniform * k}; }
};

PatternRates pattern_rates(const Cluster& cluster, int nodes);

}  // namespace dtsim::topology
