// HardwareView: the physical figures the collective algorithms price against, derived once from a
// ClusterSpec and the model parameters: effective per-GPU scale-up bandwidth and its link class,
// NIC bandwidth per node and per GPU, the latency of one inter-node step, and which NCCL features
// the hardware allows (NVLS, CollNet, LL128). CommShape is where a communicator's ranks sit.
//   HardwareView hw(spec, params);
//   CommShape shape = hw.shape_of(comm);   // ranks, nodes spanned, ranks per node
#pragma once

#include <memory>

#include "collectives/cost_model.h"
#include "collectives/model_parameters.h"
#include "topology/cluster_spec.h"
#include "topology/fabric_load.h"

namespace dtsim::collectives {

struct CommShape {
  int ranks = 1;
  int nodes = 1;           // scale-up domains the communicator spans
  int ranks_per_node = 1;  // the largest number of its ranks in one domain
};

struct HardwareView {
  HardwareView(const topology::ClusterSpec& spec, const ModelParameters& params);

  CommShape shape_of(const Communicator& comm) const;
  // The scale-out bandwidth a communicator's ranks in one node can drive, GB/s per direction:
  // NCCL gives each GPU the NICs nearest it, and the node's other GPUs use theirs for their own
  // communicators, so ranks_per_node of the domain's GPUs get that share of its NICs (a domain
  // of several nodes, an NVL72 rack of trays, counts as one node with all their NICs).
  double comm_net_bw(const CommShape& shape) const;
  // What a communicator's ranks in one node drive between nodes in a traffic pattern: where the
  // fabric's links are priced (fabric_rates), its NICs' share before any leaf oversubscription,
  // capped by the pattern's rate (a ring's neighbours mostly share a leaf); comm_net_bw elsewhere.
  enum class Pattern { ring, tree, all_to_all };
  double net_bw(const CommShape& shape, Pattern pattern) const;
  // What one rank of an all-to-all sends to the other nodes: its NIC's share, and where the
  // fabric's links are priced, their all-to-all rate over the node's ranks.
  double exchange_gpu_bw(const CommShape& shape) const;
  // On a torus, a dragonfly or an oversubscribed fat-tree, the rate a node of a communicator over `shape.nodes` nodes can
  // send in each traffic pattern before a router-to-router link saturates (GB/s per direction,
  // the NIC kind's efficiency applied; topology/fabric_load.h). Infinite on the other fabrics,
  // whose limits node_net_bw already carries. Worked out once per node count from the cluster
  // graph, which is built on first use; safe to call from several threads.
  topology::PatternRates fabric_rates(const CommShape& shape) const;

  // Scale-up: the rate one GPU reaches to its ring neighbour in the same domain (GB/s, one
  // direction), and the link class whose per-step latency applies.
  LinkClass intra_class = LinkClass::nvlink;
  double intra_bw = 0;             // effective, ring neighbours within a domain of > 2 GPUs
  double intra_pair_bw = 0;        // effective, between the two GPUs of an NVLink-bridged pair
  double intra_raw_bw = 0;         // line rate per GPU per direction (NVLS prices against it)
  bool host_staged_intra = false;  // NCCL_P2P_DISABLE-like: peers exchange through host memory
  bool nvswitch = false;
  int domain_gpus = 8;  // GPUs of one scale-up domain (a node, or an NVL72 rack)

  // Scale-out, effective (line rate x NIC-kind efficiency, fabric oversubscription applied).
  double node_net_bw = 0;          // all NICs of a node together, GB/s per direction
  double gpu_net_bw = 0;           // a node's share per GPU
  double single_nic_bw = 0;        // one NIC: what one flow (all-to-all pairwise) can use
  double net_step_latency_us = 0;  // NIC, stack and fabric hops of one inter-node step
  double net_wire_latency_us = 0;  // its NIC and fabric part (the stack's excluded)
  double message_overhead_us = 0;  // per message posted to the NIC
  double send_completion_us = 0;   // a send's FIFO slot held past its step (ModelParameters)
  bool ll128_net_ok = true;        // LL128 needs a GPUDirect path to the NIC

  int compute_capability = 90;
  bool sharp = false;
  int default_channels = 16;

  const topology::ClusterSpec& spec;
  const ModelParameters& params;

 private:
  struct RouterFabric;
  double comm_share(double node_bw, const CommShape& shape) const;
  std::shared_ptr<RouterFabric> router_fabric_;  // set on a torus, a dragonfly, an oversubscribed fat-tree
  double net_efficiency_ = 1;
  double node_nic_bw_ = 0;  // node_net_bw before the leaf oversubscription
};

}  // namespace dtsim::collectives
