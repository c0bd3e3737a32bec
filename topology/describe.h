// Inspecting a built cluster: summarize() counts what was built (GPUs, nodes, switches per
// tier, links, NICs) and measures it (bisection bandwidth, leaf oversubscription, equal-cost
// path diversity between node 0 and the last node); describe() prints that as text, JSON or,
// for small clusters, a Graphviz DOT graph of every device and link. `simulate --describe`
// calls these.
//   describe(*cluster, DescribeFormat::json, std::cout);
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "topology/cluster.h"
#include "topology/fabric_load.h"

namespace dtsim::topology {

enum class DescribeFormat { text, json, dot };

struct ClusterSummary {
  std::string node_preset;
  std::string gpu;
  std::string fabric;  // fabric kind, or "file" for a whole-graph topology file
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  int domain_nodes = 1;  // nodes joined by one NVLink domain (18 trays of an NVL72 rack), built as one
  int nics = 0;
  int switches = 0;  // scale-out switches (and torus/dragonfly routers)
  std::vector<int> switches_per_tier;
  int nvswitches = 0;
  int pcie_switches = 0;
  int hosts = 0;
  int devices = 0;
  int64_t links = 0;  // cables: each is a pair of directed links
  int64_t network_links = 0;
  int64_t nvlink_links = 0;
  int64_t pcie_links = 0;
  Bandwidth bisection_bandwidth;  // one direction, first half of the nodes to the second
  double oversubscription = 1;    // worst edge switch: NIC-facing over switch-facing bandwidth
  uint64_t path_diversity = 0;    // equal-cost routes from GPU 0 to the last node's first GPU
  // A torus's or a dragonfly's: what a node sends in each pattern over the whole cluster before a
  // router link saturates (line rates; topology/fabric_load.h). Infinite elsewhere.
  PatternRates router_rates;
};

ClusterSummary summarize(const Cluster& c);

// Path diversity between two nodes: the equal-cost routes ECMP can spread the flows from the
// first GPU of `node_a` to the first GPU of `node_b` over.
uint64_t node_path_diversity(const Cluster& c, int node_a, int node_b);

// DOT is refused (InputError) above kMaxDotDevices devices: the picture would be unreadable.
inline constexpr int kMaxDotDevices = 1000;
void describe(const Cluster& c, DescribeFormat format, std::ostream& out);

}  // namespace dtsim::topology
