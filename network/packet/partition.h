// How a cluster's devices are cut into partitions for a parallel packet-level run
// (sim/partitioned_engine.h). The packet model's sites are the cluster's devices; a node's
// devices (GPUs, NVSwitches, PCIe switches, NICs) always share a partition, because a node's
// events hand work to each other without a link's latency (a transfer that arrives releases the
// next one from a neighbouring GPU). Nodes go to partitions in contiguous blocks of equal size,
// and each fabric switch, tier by tier from the leaves up, joins the partition most of its links
// lead to (ties: the one with the fewest switches of that tier), so a leaf stays with its nodes
// and spines spread evenly. The lookahead is the least latency of a link between partitions.
//   network::ClusterPartition cut = network::partition_cluster(cluster, 4);
//   sim::PartitionedEngine engines(cut.owner, cut.lookahead);
#pragma once

#include <cstdint>
#include <vector>

#include "sim/units.h"
#include "topology/cluster.h"

namespace dtsim::network {

struct ClusterPartition {
  std::vector<uint32_t> owner;  // per device (site): its partition
  std::vector<uint32_t> of_gpu;  // per GPU: the partition of its device
  uint32_t partitions = 1;      // at most the requested count and the node count
  Time lookahead = Time::max();  // Time::max() with one partition
};

// Throws std::invalid_argument when partitions is 0, or when a link between two partitions has
// no latency (nothing could run in parallel across it).
ClusterPartition partition_cluster(const topology::Cluster& cluster, uint32_t partitions);

}  // namespace dtsim::network
