// libFuzzer target for the NCCL topology XML reader (topology/nccl_topology_xml.cc): any bytes are
// read into a node or refused with an InputError. A node that reads gives the figures the loader
// takes (finite, non-negative) and builds into a two-node cluster whose GPUs route to each other.
//   scripts/fuzz.sh 600 topology_xml
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/finding.h"
#include "topology/catalog.h"
#include "topology/cluster.h"
#include "topology/topology_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  static const topology::ClusterSpec spec = [] {
    topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
    s.nodes = 2;
    return s;
  }();
  topology::NodeTemplate node;
  if (!fuzz::reads_or_refuses("parse_nccl_topology_xml", [&] { node = topology::parse_nccl_topology_xml(spec, text, "fuzz.xml"); }))
    return 0;
  const topology::TopologyFileFacts facts = topology::nccl_topology_facts(node);
  if (facts.gpus_per_node < 1) fuzz::finding("a node without GPUs was read", std::to_string(facts.gpus_per_node));
  fuzz::check_figure("nic_bandwidth", facts.nic_bandwidth.gbps());
  fuzz::check_figure("scale_up_bandwidth", facts.scale_up_bandwidth.gbytes_per_s());
  if (node.parts.size() > 4096) return 0;  // a node this large builds, but slowly: not the reader's concern
  std::unique_ptr<topology::Cluster> cluster;
  if (!fuzz::reads_or_refuses("build_nodes_and_fabric", [&] { cluster = topology::build_nodes_and_fabric(spec, node); }))
    return 0;
  if (cluster->gpu_count() >= 2 && node.nics.size() > 0) (void)cluster->route(0, cluster->gpu_count() - 1);
  return 0;
}
