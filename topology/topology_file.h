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
#include <optional>
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

// What a topology file says of the cluster in ClusterSpec's terms: the figures the models that
// price a cluster from its spec (the closed form, the hardware view, --describe) take from it.
struct TopologyFileFacts {
  bool whole_graph = false;  // YAML: every node and the fabric; XML: the inside of one node
  int nodes = 0;             // whole_graph only
  int gpus_per_node = 0;
  int nic_count = 0;
  Bandwidth nic_bandwidth;   // the slowest NIC port's; zero where the file gives no speed
  Bandwidth nic_pcie_bound;  // XML: a NIC's share of its PCIe path where below its port; else zero
  std::optional<ScaleUpKind> scale_up_kind;  // XML only: NVSwitch, NVLink bridges, or PCIe
  Bandwidth scale_up_bandwidth;  // per GPU, per direction, the slowest GPU's; zero when unsaid
  int gpu_sm = 0;                // XML: the GPUs' compute capability (<gpu sm>); 0 when unsaid
  int slower_nics_left_out = 0;  // XML: NIC ports slower than the fastest, not part of the node
};
// Reads spec.topology_file (by its extension: .xml is NCCL's, anything else the YAML graph);
// throws InputError as the readers above do.
TopologyFileFacts topology_file_facts(const ClusterSpec& spec);
TopologyFileFacts nccl_topology_facts(const NodeTemplate& node);

// Stamps `node` out spec.nodes times and wires the spec's fabric between them.
std::unique_ptr<Cluster> build_nodes_and_fabric(ClusterSpec spec, const NodeTemplate& node);

}  // namespace dtsim::topology
