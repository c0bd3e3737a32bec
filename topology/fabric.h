// Scale-out fabric builders: each wires the NIC ports of all nodes (node-major: node 0's NICs,
// then node 1's, ...) into one kind of network, sized from the node count, radix and tiers.
// Each NIC is one host port of the fabric. A fabric that cannot hold the ports throws an
// InputError that says which radix or tiers would.
//   build_fabric(builder, spec, nic_ports);   // dispatches on spec.fabric.kind
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "topology/cluster_builder.h"

namespace dtsim::topology {

void build_fabric(ClusterBuilder& b, const ClusterSpec& spec, std::span<const DeviceId> nic_ports);

// The cable from a NIC to its switch runs at the slower of the NIC and the fabric's links.
inline Bandwidth nic_cable_bandwidth(const ClusterSpec& spec) {
  return std::min(spec.nic.bandwidth, spec.fabric.link.bandwidth);
}

void build_single_switch(ClusterBuilder& b, const ClusterSpec& spec,
                         std::span<const DeviceId> nic_ports);
void build_fat_tree(ClusterBuilder& b, const ClusterSpec& spec,
                    std::span<const DeviceId> nic_ports);
void build_rail_optimized(ClusterBuilder& b, const ClusterSpec& spec,
                          std::span<const DeviceId> nic_ports);
void build_dragonfly(ClusterBuilder& b, const ClusterSpec& spec,
                     std::span<const DeviceId> nic_ports);
void build_torus(ClusterBuilder& b, const ClusterSpec& spec, std::span<const DeviceId> nic_ports);

// A folded Clos (leaf, spine, core) of `tiers` tiers of radix-`radix` switches. Leaves split
// their ports down:up = oversubscription (down = up * oversubscription, rounded so the ratio is
// never worse than asked). Two tiers: up to `radix` leaves, each wired to every spine (as many
// spines as a leaf has up ports). Three tiers: pods of radix/2 leaves and `up` aggregation
// switches (each leaf to every aggregation switch of its pod), up to `radix` pods; aggregation
// switch j of every pod reaches the radix/2 cores of core group j.
struct ClosShape {
  int radix = 0;
  int tiers = 0;
  int down = 0;  // leaf ports towards NICs
  int up = 0;    // leaf ports towards the next tier
  int64_t max_leaves() const;
  int64_t max_ports() const { return max_leaves() * down; }
};

// Validates radix, tiers and oversubscription (InputError on cluster.fabric.* otherwise).
ClosShape clos_shape(const FabricSpec& f);
// The smallest radix >= f.radix whose Clos of the same tiers holds `ports` (0 when none does).
int clos_radix_for(const FabricSpec& f, int64_t ports, int64_t ports_per_leaf_group = 1);
// Builds `leaves` leaves and the tiers above them; returns the leaves in order.
std::vector<DeviceId> build_clos(ClusterBuilder& b, const ClusterSpec& spec, const ClosShape& shape,
                                 int64_t leaves,
                                 const std::function<std::string(int64_t)>& leaf_name);

}  // namespace dtsim::topology
