// build_cluster(): checks the spec, stamps out the nodes and wires the fabric, or reads the
// topology file the spec names.
#include <algorithm>
#include <string>

#include "sim/error.h"
#include "topology/cluster.h"
#include "topology/fabric.h"
#include "topology/node_template.h"
#include "topology/topology_file.h"

namespace dtsim::topology {
namespace {

void require(bool ok, const std::string& key, const std::string& message) {
  if (!ok) throw InputError(SourceLocation{}, key, message);
}

void check_spec(const ClusterSpec& s) {
  require(s.nodes >= 1, "cluster.nodes",
          "expected a positive integer, got " + std::to_string(s.nodes));
  require(s.gpus_per_node >= 1, "cluster.gpus_per_node",
          "expected a positive integer, got " + std::to_string(s.gpus_per_node));
  require(s.nic.count >= 0, "cluster.nic.count",
          "expected 0 or more, got " + std::to_string(s.nic.count));
  require(
      s.nodes == 1 || s.nic.count >= 1, "cluster.nic.count",
      "nodes need at least one NIC to reach each other (" + std::to_string(s.nodes) + " nodes)");
  require(s.scale_up.kind == ScaleUpKind::none || !s.scale_up.bandwidth.is_zero(),
          "cluster.scale_up.bandwidth", "expected a positive bandwidth");
  require(s.nic.count == 0 || !s.nic.bandwidth.is_zero(), "cluster.nic.bandwidth",
          "expected a positive bandwidth");
  require(s.nodes == 1 || !s.fabric.link.bandwidth.is_zero(), "cluster.fabric.link.bandwidth",
          "expected a positive bandwidth");
  const std::string domain = domain_misfit(s);
  require(domain.empty(), "cluster.scale_up.domain_gpus", domain);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::unique_ptr<Cluster> build_nodes_and_fabric(ClusterSpec spec, const NodeTemplate& node) {
  spec.gpus_per_node = node.gpus;
  spec.nic.count = static_cast<int>(node.nics.size());
  if (!node.nic_bandwidth.is_zero()) spec.nic.bandwidth = node.nic_bandwidth;
  check_spec(spec);
  ClusterBuilder b;
  b.reserve(node.parts.size() * static_cast<size_t>(spec.nodes) + 64,
            (node.wires.size() + 3 * node.nics.size()) * static_cast<size_t>(spec.nodes) + 64);
  std::vector<DeviceId> nic_ports;
  nic_ports.reserve(node.nics.size() * static_cast<size_t>(spec.nodes));
  for (int n = 0; n < spec.nodes; ++n) instantiate_node(b, node, n, nic_ports);
  if (spec.nodes > 1) build_fabric(b, spec, nic_ports);
  return std::move(b).finish(std::move(spec));
}

std::string domain_misfit(const ClusterSpec& s) {
  if (s.scale_up.kind != ScaleUpKind::nvswitch || s.scale_up.domain_gpus == s.gpus_per_node) return "";
  const int d = s.scale_up.domain_gpus;
  const int g = s.gpus_per_node;
  if (d < g || s.nodes_per_domain() == 1) {
    if (g == 1) return "";  // one GPU a node: there is no NVLink between nodes to share
    return "an NVLink domain of " + std::to_string(d) + " GPUs does not fit nodes of " + std::to_string(g) +
           ": expected " + std::to_string(g) + " (the node) or a multiple of it (an NVL72 rack of 4-GPU trays: 72)";
  }
  const int k = s.nodes_per_domain();
  if (s.nodes > k && s.nodes % k != 0) {
    return "NVLink domains of " + std::to_string(d) + " GPUs join " + std::to_string(k) + " nodes of " +
           std::to_string(g) + "; " + std::to_string(s.nodes) + " nodes leave the last one partial: use a multiple of " +
           std::to_string(k);
  }
  return "";
}

ClusterSpec graph_spec(const ClusterSpec& spec) {
  const int k = std::min(spec.nodes_per_domain(), spec.nodes);
  if (k <= 1) return spec;
  ClusterSpec g = spec;
  g.nodes = spec.nodes / k;
  g.gpus_per_node = spec.gpus_per_node * k;
  g.nic.count = spec.nic.count * k;
  g.scale_up.domain_gpus = g.gpus_per_node;
  g.nodes_per_graph_node = k;
  return g;
}

std::unique_ptr<Cluster> build_cluster(const ClusterSpec& written) {
  if (written.uses_topology_file()) {
    const std::string& path = *written.topology_file;
    if (ends_with(path, ".xml"))
      return build_nodes_and_fabric(written, read_nccl_topology_xml(written, path));
    return read_topology_yaml(written, path);
  }
  check_spec(written);
  const ClusterSpec spec = graph_spec(written);
  return build_nodes_and_fabric(spec, node_template(spec));
}

void check_fabric(const ClusterSpec& written) {
  if (written.nodes <= 1 || written.uses_topology_file()) return;
  const ClusterSpec spec = graph_spec(written);
  if (spec.nodes <= 1) return;
  switch (spec.fabric.kind) {
    case FabricKind::single_switch:
      return check_single_switch(spec);
    case FabricKind::fat_tree:
      check_fat_tree(spec);
      return;
    case FabricKind::rail_optimized:
      check_rail_optimized(spec);
      return;
    case FabricKind::dragonfly:
      check_dragonfly(spec);
      return;
    case FabricKind::torus:
      return check_torus(spec);
  }
}

void build_fabric(ClusterBuilder& b, const ClusterSpec& spec, std::span<const DeviceId> nic_ports) {
  switch (spec.fabric.kind) {
    case FabricKind::single_switch:
      return build_single_switch(b, spec, nic_ports);
    case FabricKind::fat_tree:
      return build_fat_tree(b, spec, nic_ports);
    case FabricKind::rail_optimized:
      return build_rail_optimized(b, spec, nic_ports);
    case FabricKind::dragonfly:
      return build_dragonfly(b, spec, nic_ports);
    case FabricKind::torus:
      return build_torus(b, spec, nic_ports);
  }
}

}  // namespace dtsim::topology
