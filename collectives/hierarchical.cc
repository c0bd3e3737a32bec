// Hierarchical 2D all_reduce: reduce-scatter inside each node (ring over its g ranks), then g
// independent all_reduces across nodes, one per local rank on its own NIC share, each on 1/g of
// the buffer, then all-gather inside the node. Not an NCCL algorithm; used when asked.
#include <algorithm>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost hierarchical_cost(const HardwareView& hw, const CostQuery& q) {
  const int g = q.shape.ranks_per_node;
  const int nodes = q.shape.nodes;
  CostQuery intra = q;
  intra.shape = {g, 1, g};
  intra.kind = CollectiveKind::reduce_scatter;
  const AlgoCost rs = ring_cost(hw, intra);
  intra.kind = CollectiveKind::all_gather;
  const AlgoCost ag = ring_cost(hw, intra);
  CostQuery inter = q;
  inter.shape = {nodes, nodes, 1};
  inter.bytes = q.bytes / g;
  AlgoCost ar = ring_cost(hw, inter);
  if (nodes > 1) {
    // Each of the g concurrent rings gets the node's NICs' share of one GPU.
    const double busbw = channel_capped(hw, q.protocol, q.channels, hw.gpu_net_bw, true);
    ar.algbw_gbytes = busbw / busbw_factor(CollectiveKind::all_reduce, nodes);
  }
  const double t = rs.time_us(q.bytes) + ar.time_us(inter.bytes) + ag.time_us(q.bytes);
  AlgoCost c;
  c.latency_us = rs.latency_us + ar.latency_us + ag.latency_us;
  const double bw_part = t - c.latency_us;
  c.algbw_gbytes = bw_part > 0 ? q.bytes / (bw_part * 1e3) : 1e30;
  return c;
}

}  // namespace dtsim::collectives
