// Topology files: a cluster described by a file instead of by the spec's keys.
//  - YAML, the whole graph: `devices:` (name, kind: gpu|nvswitch|pcie-switch|host|nic|switch,
//    node for devices inside a node, tier for switches) and `links:` (from, to, bandwidth and
//    latency with units, optional kind: nvlink|pcie|network). Each entry is one cable; dtsim adds
//    both directions.
//  - NCCL topology XML (what NCCL_TOPO_DUMP_FILE writes) for the inside of one node; every node
//    of the cluster gets that inside and the spec's fabric joins them.
// Mistakes (dangling link, zero bandwidth, disconnected GPU, duplicate name, unknown kind) are
// InputErrors naming the element and its line.
//   ClusterSpec s = ...; s.topology_file = "cluster.yaml";  auto c = build_cluster(s);
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "topology/cluster.h"
#include "topology/node_template.h"

namespace dtsim::topology {

// `spec` supplies what the file does not say (GPU model, NIC kind); nodes and gpus_per_node are
// taken from the file.
std::unique_ptr<Cluster> read_topology_yaml(const ClusterSpec& spec, const std::string& path);
std::unique_ptr<Cluster> parse_topology_yaml(const ClusterSpec& spec, std::string_view text,
                                             const std::string& file_name);

NodeTemplate read_nccl_topology_xml(const ClusterSpec& spec, const std::string& path);
NodeTemplate parse_nccl_topology_xml(const ClusterSpec& spec, std::string_view text,
                                     const std::string& file_name);

// Stamps `node` out spec.nodes times and wires the spec's fabric between them.
std::unique_ptr<Cluster> build_nodes_and_fabric(ClusterSpec spec, const NodeTemplate& node);

}  // namespace dtsim::topology
