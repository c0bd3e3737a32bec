// ClusterBill: what a cluster is made of, counted for pricing: GPUs, NICs, scale-out switches
// and network links (cables). A sweep prices each point with it (capex, power) so a planner can
// weigh time against cost:
//   report::ClusterBill bill = report::count_cluster(scenario.cluster);
//   report::PointCost c = report::price(bill, sweep.cost);   // c.capex_usd, c.power_w
#pragma once

#include <cstdint>

#include "config/sweep.h"
#include "topology/cluster_spec.h"

namespace dtsim::report {

struct ClusterBill {
  int64_t gpus = 0;
  int64_t nics = 0;
  int64_t switches = 0;  // scale-out switches; NVSwitch chips are part of a GPU's node price
  int64_t links = 0;     // scale-out cables, NIC-to-leaf included; each has two transceivers
};

// Counts from the spec with the same sizing rules the fabric builders follow: leaves take
// radix*o/(1+o) hosts at oversubscription o, upper tiers are non-blocking, rail-optimized fabrics
// give each NIC rail its own leaves, dragonfly routers split their ports 1:2:1 between hosts,
// local and global links, and a torus is switchless with `torus_dims` links per node.
ClusterBill count_cluster(const topology::ClusterSpec& spec);

struct PointCost {
  double capex_usd = 0;
  double power_w = 0;
};

PointCost price(const ClusterBill& bill, const config::CostModel& cost);

}  // namespace dtsim::report
