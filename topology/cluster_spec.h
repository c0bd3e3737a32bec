// ClusterSpec: the cluster a scenario describes, as plain typed values: which GPU, how many per
// node, the scale-up fabric inside a node (or NVLink domain), the NICs, and the scale-out fabric
// between nodes. config/ fills it from YAML (catalog presets first, then the user's keys);
// topology/ builds the cluster graph from it; the network models read link figures from it.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "sim/units.h"

namespace dtsim::topology {

enum class ScaleUpKind { nvswitch, nvlink_bridge, pcie, none };
// tcp: GPUDirect-TCPXO (FasTrak, the NIC runs the transport) on NVSwitch nodes, plain sockets
// elsewhere; tcpx: first-generation GPUDirect-TCPX, whose TCP runs in the hosts' kernels.
enum class NicKind { infiniband, roce, efa, tcp, tcpx };
enum class FabricKind { single_switch, fat_tree, rail_optimized, dragonfly, torus };
// How a transfer that crosses the fabric uses its equal-cost routes: ECMP hashes it onto one;
// adaptive routing sprays it over many; automatic is ClusterSpec::adaptive_routing()'s choice.
enum class Routing { automatic, ecmp, adaptive };
enum class Dtype { fp32, tf32, bf16, fp16, fp8, fp4 };
// FP8 and FP4: the block-scaled formats training recipes quantize GEMM inputs to, keeping the
// rest (attention, elementwise work, communication) in BF16.
inline bool quantized(Dtype d) { return d == Dtype::fp8 || d == Dtype::fp4; }

struct GpuSpec {
  std::string name;                  // catalog name, e.g. "h100-sxm"
  int compute_capability = 90;       // 80 Ampere, 89 Ada, 90 Hopper, 100 Blackwell
  std::map<Dtype, double> peak_flops;  // dense FLOP/s per dtype (absent: not supported)
  Bytes hbm_capacity;
  Bandwidth hbm_bandwidth;
  int nvlink_generation = 0;         // 0: no NVLink
  int nvlink_links = 0;              // links per GPU
  Bandwidth nvlink_bandwidth;        // per GPU, per direction, all links together
  int pcie_generation = 4;
  bool operator==(const GpuSpec&) const = default;
};

struct ScaleUpSpec {
  ScaleUpKind kind = ScaleUpKind::nvswitch;
  Bandwidth bandwidth = Bandwidth::gbytes_per_s(450);  // per GPU, per direction
  Time latency = Time::us(1);
  int domain_gpus = 8;               // GPUs sharing one NVLink domain (72 for NVL72)
  bool operator==(const ScaleUpSpec&) const = default;
};

struct NicSpec {
  NicKind kind = NicKind::infiniband;
  int count = 8;                     // per node
  Bandwidth bandwidth = Bandwidth::gbps(400);  // per NIC, per direction
  Time latency = Time::us(2);        // one-way base latency through the NIC and stack
  Time message_overhead = Time::ns(500);  // per message posted (calibrated per NIC kind)
  bool operator==(const NicSpec&) const = default;
};

struct LinkSpec {
  Bandwidth bandwidth = Bandwidth::gbps(400);
  Time latency = Time::ns(500);
};

struct FabricSpec {
  FabricKind kind = FabricKind::fat_tree;
  int tiers = 2;
  int radix = 64;
  double oversubscription = 1;       // 2 means 2:1 at the leaves
  LinkSpec link;
  bool sharp = false;                // in-network reduction (CollNet)
  int dragonfly_groups = 0;          // 0: derived from nodes and radix
  int torus_dims = 2;                // 2 or 3
  Routing routing = Routing::automatic;
};

struct ClusterSpec {
  std::string node_preset;           // catalog node this spec started from, e.g. "hgx-h100"
  int nodes = 2;
  GpuSpec gpu;
  int gpus_per_node = 8;
  ScaleUpSpec scale_up;
  NicSpec nic;
  FabricSpec fabric;
  std::optional<std::string> topology_file;
  // Set only on the spec a cluster graph is built from (graph_spec): how many of the scenario's
  // nodes each of its nodes joins, an NVLink domain that spans nodes (an NVL72 rack of 4-GPU
  // trays) being built as one node. 1 otherwise.
  int nodes_per_graph_node = 1;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Whether topology_file names a file (an empty string is none).
  bool uses_topology_file() const { return topology_file && !topology_file->empty(); }
  // How many whole nodes one NVLink domain joins: domain_gpus / gpus_per_node when an NVSwitch
  // domain is a multiple (two or more) of a node of two or more GPUs (NVL72: 18 trays of 4), else 1.
  // Every model takes a domain from this one rule.
  int nodes_per_domain() const {
    const bool spans = scale_up.kind == ScaleUpKind::nvswitch && gpus_per_node >= 2 &&
                       scale_up.domain_gpus > gpus_per_node && scale_up.domain_gpus % gpus_per_node == 0;
    return spans ? scale_up.domain_gpus / gpus_per_node : 1;
  }
  // NICs each GPU has of its own (AWS P5: 4); 1 where GPUs share NICs or have none.
  int nics_per_gpu() const { return std::max(1, nic.count / std::max(1, gpus_per_node)); }
  // Whether transfers between nodes are sprayed over equal-cost routes (fabric.routing, with
  // `auto` resolved by the NIC kind: EFA's SRD sprays every flow; InfiniBand adaptive routing and
  // Spectrum-X are switch options that many fabrics leave off, so ECMP is the default there).
  bool adaptive_routing() const {
    return fabric.routing == Routing::adaptive || (fabric.routing == Routing::automatic && nic.kind == NicKind::efa);
  }
};

}  // namespace dtsim::topology
