#include "collectives/hardware_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "topology/cluster.h"

namespace dtsim::collectives {
namespace {

// Usable PCIe x16 rate per direction by generation (GB/s): 128b/130b line coding and TLP
// headers leave about 80% of the raw 16/32/64/128 GB/s; pcie_efficiency models the rest.
double pcie_x16_gbytes(int generation) {
  switch (generation) {
    case 3:
      return 15.75;
    case 4:
      return 31.5;
    case 5:
      return 63.0;
    default:
      return generation >= 6 ? 121.0 : 7.9;
  }
}

}  // namespace

struct HardwareView::RouterFabric {
  std::mutex mutex;
  std::unique_ptr<topology::Cluster> cluster;  // built on first use
  std::map<int, topology::PatternRates> by_nodes;
};

HardwareView::HardwareView(const topology::ClusterSpec& s, const ModelParameters& p)
    : spec(s), params(p) {
  using topology::ScaleUpKind;
  const auto& up = spec.scale_up;
  const double up_bw = up.bandwidth.gbytes_per_s();
  nvswitch = up.kind == ScaleUpKind::nvswitch;
  // An NVLink domain larger than a node (NVL72 racks built of 4-GPU trays) joins whole nodes;
  // otherwise the domain is the node.
  domain_gpus = spec.gpus_per_node * spec.nodes_per_domain();
  compute_capability = spec.gpu.compute_capability;
  sharp = spec.fabric.sharp;
  const double pcie = pcie_x16_gbytes(spec.gpu.pcie_generation) * p.pcie_efficiency;

  switch (up.kind) {
    case ScaleUpKind::nvswitch:
      intra_class = LinkClass::nvlink;
      intra_raw_bw = up_bw;
      intra_bw = intra_pair_bw = up_bw * p.nvlink_efficiency;
      break;
    case ScaleUpKind::nvlink_bridge:
      // Bridges join GPUs in pairs; a ring over more than two GPUs also crosses PCIe.
      intra_class = spec.gpus_per_node > 2 ? LinkClass::pcie : LinkClass::nvlink;
      intra_raw_bw = up_bw;
      intra_pair_bw = up_bw * p.nvlink_efficiency;
      intra_bw = spec.gpus_per_node > 2 ? pcie : intra_pair_bw;
      break;
    case ScaleUpKind::pcie:
      intra_class = LinkClass::pcie;
      intra_raw_bw = up_bw;
      intra_bw = intra_pair_bw = up_bw * p.pcie_efficiency;
      break;
    case ScaleUpKind::none: {
      // No peer access: each hop is a store to pinned host memory and a load from it by the
      // peer. Loads over PCIe are latency bound (Little's law: bytes in flight / round trip),
      // so scale_up.latency, the host round trip of this path, sets the rate.
      intra_class = LinkClass::pcie;
      host_staged_intra = true;
      const double window_gbytes = p.host_inflight_bytes / (up.latency.us() * 1e3);
      intra_raw_bw = up_bw;
      intra_bw = intra_pair_bw = std::min(up_bw * p.pcie_efficiency, window_gbytes);
      break;
    }
  }

  const auto& nic = spec.nic;
  const double nic_line = nic.bandwidth.gbytes_per_s();
  double eff = p.net_efficiency(nic.kind);
  // Plain TCP sockets (no GPUDirect TCPX, which only HGX machines carry) stage every byte
  // through host memory and the kernel stack, which caps a GPU's rate.
  const bool socket_staged = nic.kind == topology::NicKind::tcp && !nvswitch;
  ll128_net_ok = !socket_staged;
  single_nic_bw = nic_line * eff;
  // A domain that joins several nodes (an NVL72 rack of trays) is one node to the network
  // figures, as to the graph (topology::graph_spec): its rings leave through all its NICs.
  const int domain_nics = nic.count * spec.nodes_per_domain();
  node_net_bw = domain_nics * nic_line * eff;
  // The fabric: each NIC's uplink, divided by the leaf oversubscription once the job spans
  // more nodes than one leaf switch holds.
  const double link_bw = spec.fabric.link.bandwidth.gbytes_per_s() * eff;
  const double os = std::max(1.0, spec.fabric.oversubscription);
  const int leaf_down_ports = std::max(1, static_cast<int>(spec.fabric.radix * os / (os + 1)));
  const int nodes_per_leaf = spec.fabric.kind == topology::FabricKind::rail_optimized
                                 ? leaf_down_ports
                                 : std::max(1, leaf_down_ports / std::max(1, nic.count));
  double uplink = domain_nics * std::min(link_bw, nic_line * eff);
  node_net_bw = std::min(node_net_bw, uplink);
  if (socket_staged) node_net_bw = std::min(node_net_bw, p.socket_bandwidth * domain_gpus);
  node_nic_bw_ = node_net_bw;
  const bool oversubscribed = spec.nodes > nodes_per_leaf && os > 1;
  if (oversubscribed) node_net_bw /= os;
  gpu_net_bw = node_net_bw / std::max(1, domain_gpus);
  single_nic_bw = std::min(single_nic_bw, node_net_bw);

  // One inter-node step: NIC latency at both ends is in nic.latency (one way), the fabric adds
  // one link per tier up and down, and the NIC kind's software stack adds its own.
  const int hops = spec.nodes > nodes_per_leaf ? 2 * spec.fabric.tiers : 2;
  net_step_latency_us =
      nic.latency.us() + hops * spec.fabric.link.latency.us() + p.nic_latency_us(nic.kind, compute_capability);
  net_wire_latency_us = nic.latency.us() + hops * spec.fabric.link.latency.us();
  message_overhead_us = nic.message_overhead.us();
  send_completion_us = p.send_completion_us(nic.kind);

  net_efficiency_ = eff;
  // A ring's or a tree's traffic between neighbouring nodes mostly stays under one leaf, so an
  // oversubscribed fat-tree is priced by its links too; a rail-optimized fabric keeps the
  // division (its rings would cross rails in the pattern, where NCCL keeps them on one).
  const bool priced_by_links = spec.fabric.kind == topology::FabricKind::torus ||
                               spec.fabric.kind == topology::FabricKind::dragonfly ||
                               (spec.fabric.kind == topology::FabricKind::fat_tree && oversubscribed);
  if (priced_by_links && spec.nodes > 1 && !spec.uses_topology_file()) router_fabric_ = std::make_shared<RouterFabric>();

  const double widest = std::max(intra_bw, gpu_net_bw);
  default_channels = std::clamp(static_cast<int>(std::ceil(widest / p.channel_bandwidth)), 2, 32);
}

double HardwareView::comm_share(double node_bw, const CommShape& shape) const {
  const int per_node = std::max(1, domain_gpus);
  if (shape.ranks_per_node >= per_node) return node_bw;
  // A lone rank still gets at least one whole NIC where the node has fewer NICs than GPUs.
  return std::max(node_bw * shape.ranks_per_node / per_node, std::min(single_nic_bw, node_bw));
}

double HardwareView::comm_net_bw(const CommShape& shape) const { return comm_share(node_net_bw, shape); }

double HardwareView::net_bw(const CommShape& shape, Pattern pattern) const {
  if (!router_fabric_ || shape.nodes <= 1) return comm_net_bw(shape);
  const topology::PatternRates r = fabric_rates(shape);
  const double links = pattern == Pattern::ring ? r.ring : pattern == Pattern::tree ? r.tree : r.uniform;
  return std::min(comm_share(node_nic_bw_, shape), links);
}

double HardwareView::exchange_gpu_bw(const CommShape& shape) const {
  if (!router_fabric_ || shape.nodes <= 1) return std::min(single_nic_bw, gpu_net_bw);
  const double nic = std::min(single_nic_bw, node_nic_bw_ / std::max(1, domain_gpus));
  return std::min(nic, fabric_rates(shape).uniform / std::max(1, shape.ranks_per_node));
}

topology::PatternRates HardwareView::fabric_rates(const CommShape& shape) const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!router_fabric_ || shape.nodes <= 1) return {inf, inf, inf};
  RouterFabric& f = *router_fabric_;
  std::lock_guard lock(f.mutex);
  auto it = f.by_nodes.find(shape.nodes);
  if (it == f.by_nodes.end()) {
    if (!f.cluster) f.cluster = topology::build_cluster(spec);
    it = f.by_nodes.emplace(shape.nodes, topology::pattern_rates(*f.cluster, shape.nodes).scaled(net_efficiency_))
             .first;
  }
  // The node's other GPUs run copies of this communicator (the other ranks of a data-parallel
  // stage, as comm_net_bw assumes for the NICs), and all of them cross the same router links.
  return it->second.scaled(std::min(1.0, static_cast<double>(shape.ranks_per_node) / std::max(1, domain_gpus)));
}

CommShape HardwareView::shape_of(const Communicator& comm) const {
  CommShape s;
  s.ranks = std::max(1, comm.size());
  if (comm.ranks.empty()) return s;
  const int first = comm.ranks.front();
  const size_t n = comm.ranks.size();
  const int d = domain_gpus;
  // The common case, a contiguous block of ranks (a sweep's world, a TP group), in closed form;
  // the check is a branch-free loop the compiler vectorizes.
  const int* rk = comm.ranks.data();
  int mismatch = 0;
  for (size_t i = 0; i < n; ++i) mismatch |= rk[i] ^ (first + static_cast<int>(i));
  if (mismatch == 0) {
    const int last = first + static_cast<int>(n) - 1;
    const int first_dom = first / d;
    const int last_dom = last / d;
    s.nodes = last_dom - first_dom + 1;
    s.ranks_per_node =
        s.nodes == 1
            ? static_cast<int>(n)
            : std::max({(first_dom + 1) * d - first, last - last_dom * d + 1, s.nodes > 2 ? d : 0});
    return s;
  }
  // Otherwise count distinct domains and the most ranks in one (custom communicators, DP groups).
  std::vector<int> doms;
  doms.reserve(n);
  for (int r : comm.ranks) doms.push_back(r / d);
  std::sort(doms.begin(), doms.end());
  int nodes = 0;
  int longest = 0;
  for (size_t i = 0; i < doms.size();) {
    size_t j = i;
    while (j < doms.size() && doms[j] == doms[i]) ++j;
    ++nodes;
    longest = std::max(longest, static_cast<int>(j - i));
    i = j;
  }
  s.nodes = nodes;
  s.ranks_per_node = longest;
  return s;
}

}  // namespace dtsim::collectives
