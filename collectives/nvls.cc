// NVLS (NVLink SHARP, Hopper and later with NVSwitch): the switch reduces (multimem.ld_reduce)
// and multicasts (multimem.st), so each GPU moves its buffer about once instead of 2(n-1)/n
// times. Its rate is a share of the GPU's NVLink bandwidth (nvls_efficiency per GPU generation,
// times n / (n + 1) for all_reduce) and
// its latency one switch round. NVLS-tree adds NCCL's inter-node tree between domains: NVLS
// inside each domain, then a tree across domains in which each node's NICs carry the buffer.
#include <algorithm>
#include <cmath>
#include <vector>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {
namespace {

double nvls_algbw(const HardwareView& hw, const CostQuery& q) {
  // The NVLink share NVLS's multimem loads and stores reach, per GPU and direction.
  double link = hw.intra_raw_bw * hw.params.nvls_efficiency(hw.compute_capability);
  if (hw.domain_gpus > 8) link *= hw.params.nvls_rack_efficiency;
  // all_reduce: the switch's reducing loads read every GPU's copy of every shard, its own
  // included, and its multicast stores write every shard back to every GPU: S + S/n through each
  // GPU's links each way for a buffer of S, so the rate climbs with n as n / (n + 1) (H100, forced
  // NVLS, algbw 207 / 251 / 266 / 273 GB/s at 2 / 4 / 6 / 8 GPUs: 0.76 / 0.92 / 0.97 / 1 of the
  // 8-GPU figure, against 0.75 / 0.90 / 0.96 / 1 from n / (n + 1)).
  // all_gather / reduce_scatter: one multicast store (or one reducing load) per shard, so S in
  // (or out) through each GPU's links: the rate is the share itself.
  if (q.kind != CollectiveKind::all_reduce) return link;
  const double n = std::max(2, q.shape.ranks_per_node);
  return link * n / (n + 1);
}

// The switch reduces a chunk only once every rank's copy of it has arrived, so the ranks'
// first chunks serialize: n stages, each holding up to nvls_pipeline_bytes of its shard.
double nvls_fill_us(const HardwareView& hw, double bytes, int ranks, double algbw) {
  const double n = ranks;
  return n * std::min(bytes / n, hw.params.nvls_pipeline_bytes) / (algbw * 1e3);
}

}  // namespace

AlgoCost nvls_cost(const HardwareView& hw, const CostQuery& q) {
  AlgoCost c;
  c.latency_us = hw.params.nvls_latency;
  c.algbw_gbytes = nvls_algbw(hw, q);
  c.fill_us = nvls_fill_us(hw, q.bytes, q.shape.ranks, c.algbw_gbytes);
  return c;
}

AlgoCost nvls_tree_cost(const HardwareView& hw, const CostQuery& q) {
  const int nodes = q.shape.nodes;
  const int levels = nodes > 1 ? static_cast<int>(std::ceil(std::log2(nodes))) : 0;
  AlgoCost c;
  c.latency_us = hw.params.nvls_latency + 2.0 * levels * inter_step_us(hw, q.protocol);
  const double net = hw.net_bw(q.shape, HardwareView::Pattern::tree) / (nodes <= 2 ? 1.0 : 2.0);
  c.algbw_gbytes = std::min(nvls_algbw(hw, q), net) * (nodes > 1 ? hw.params.nvls_tree_efficiency : 1.0);
  c.fill_us = nvls_fill_us(hw, q.bytes, q.shape.ranks_per_node, c.algbw_gbytes) +
              pipeline_fill_us(hw, q.protocol, 2 * levels, q.bytes, q.channels, c.algbw_gbytes);
  return c;
}

}  // namespace dtsim::collectives

// Lowering of NVLS-tree's network part (schedule.h).

namespace dtsim::collectives {

Schedule nvls_tree_network_schedule(Bytes bytes, const Communicator& comm, int channels,
                                    int ranks_per_node, int nics_per_gpu) {
  Schedule s;
  const int n = comm.size();
  const int g = std::max(1, std::min(ranks_per_node, n));
  const int nodes = (n + g - 1) / g;
  if (nodes <= 1) return s;
  // Local GPU k of every node carries part k of the buffer through its own NICs: a double binary
  // tree of the nodes per rail, each on the rail's share of the tuned channels, at least one on
  // each of the GPU's NICs.
  const int nics = std::max(1, nics_per_gpu);
  const int rail_channels = (std::max(1, channels / g) + nics - 1) / nics * nics;
  for (int k = 0; k < g; ++k) {
    Communicator rail;
    for (int node = 0; node < nodes; ++node) {
      if (node * g + k < n) rail.ranks.push_back(comm.ranks[static_cast<size_t>(node * g + k)]);
    }
    s.append(tree_schedule(part_of(bytes, g, k), rail, rail_channels, 1, nics_per_gpu),
             s.channels());
  }
  return s;
}

}  // namespace dtsim::collectives
