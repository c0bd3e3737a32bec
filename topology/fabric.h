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

// The fabric's host ports: every node's NICs.
inline int64_t fabric_ports(const ClusterSpec& spec) { return int64_t{spec.nodes} * spec.nic.count; }

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

// Each builder's capacity checks, apart from the building, so that a spec is refused the same way
// whether or not its graph is built (the analytical model never builds it): they throw the
// InputError the builder would, naming the key and the radix or tiers that would hold the ports.
// check_fabric() (cluster.h) dispatches on the kind.
void check_single_switch(const ClusterSpec& spec);
ClosShape check_fat_tree(const ClusterSpec& spec);
ClosShape check_rail_optimized(const ClusterSpec& spec);
struct DragonflyShape {
  int64_t p = 0;               // NIC ports (and global links) per router
  int64_t h = 0;               // global links per router
  int64_t groups = 0;
  int64_t per_group = 0;       // routers per group
  int64_t links_per_pair = 0;  // global links between two groups
};
DragonflyShape check_dragonfly(const ClusterSpec& spec);
void check_torus(const ClusterSpec& spec);

}  // namespace dtsim::topology
