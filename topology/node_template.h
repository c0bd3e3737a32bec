// NodeTemplate: the inside of one node (GPUs, NVSwitches, PCIe switches, CPU sockets, NICs and
// the links between them) described once and stamped out for every node of the cluster. It
// comes from the spec's scale_up and nic keys (node_template(spec)) or from an NCCL topology
// XML (nccl_topology_xml.h).
//   NodeTemplate t = node_template(spec);
//   for (int n = 0; n < spec.nodes; ++n) instantiate_node(builder, t, n, nic_ports);
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_builder.h"

namespace dtsim::topology {

struct NodeTemplate {
  struct Part {
    DeviceKind kind = DeviceKind::gpu;
    std::string name;  // within the node: "gpu3", "nvswitch0", "pcie1", "cpu0", "nic3"
    int local = 0;     // GPU or NIC index; running index for the others
  };
  struct Wire {
    int a = 0;  // indices into parts
    int b = 0;
    LinkKind kind = LinkKind::pcie;
    Bandwidth bandwidth;
    Time latency;
  };
  std::vector<Part> parts;
  std::vector<Wire> wires;
  std::vector<int> nics;  // parts that are NICs, in NIC order: the node's fabric ports
  int gpus = 0;
  Bandwidth nic_bandwidth;  // what the NICs run at when the source says (NCCL XML); else zero
  // NCCL XML whose GPUs are named by PCI class code only says nothing of their NVLinks (NCCL asks
  // the driver at run time): those GPUs were joined by the spec's scale_up instead.
  bool scale_up_from_spec = false;
  int slower_nics_left_out = 0;       // NCCL XML: ports slower than the node's fastest, not built
  int gpu_sm = 0;                     // NCCL XML: the GPUs' compute capability, 0 where unsaid
};

// Usable PCIe x16 bandwidth per direction for a PCIe generation (Gen4: 25 GB/s of 32 raw).
Bandwidth pcie_x16_bandwidth(int generation);
// A GPU's link to host memory, per direction: NVLink-C2C on Grace superchips (GB200, GB300:
// 900 GB/s both ways between one Grace and its two GPUs, so 225 GB/s each way per GPU when both
// copy at once), otherwise its PCIe x16.
Bandwidth host_link_bandwidth(const GpuSpec& gpu);

// The node the spec describes. GPUs sit two to a PCIe switch with NVSwitch (as on HGX boards),
// four to a switch otherwise; PCIe switches hang off CPU sockets chained by inter-socket links;
// NIC i sits on the switch of GPU i * gpus / nics. One NVSwitch joins a node's GPUs; a domain
// of several nodes (NVL72 trays) reaches here as one node already (graph_spec).
NodeTemplate node_template(const ClusterSpec& spec);

// Adds the node's devices ("node<n>/<part>") and links; appends its NICs to nic_ports.
void instantiate_node(ClusterBuilder& b, const NodeTemplate& t, int node,
                      std::vector<DeviceId>& nic_ports);

}  // namespace dtsim::topology
