// Ring: NCCL's default for large messages. Every channel lays a ring through all ranks, crossing
// each node boundary once per direction on its own NIC (rings are laid across rails), so a ring
// edge inside a node runs at the scale-up rate and the edge between nodes shares the node's NICs
// with the other channels. all_reduce is a reduce-scatter then an all-gather: 2(n-1) steps of
// size/n; all_gather and reduce_scatter are n-1 such steps; broadcast and reduce pipeline the
// whole buffer down a chain of n-1 hops.
#include <algorithm>
#include <limits>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost ring_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int nodes = q.shape.nodes;
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_us(q.protocol);
  if (n <= 1) {
    c.algbw_gbytes = std::numeric_limits<double>::infinity();
    return c;
  }
  const bool all_reduce = q.kind == CollectiveKind::all_reduce;
  const bool chain = q.kind == CollectiveKind::broadcast || q.kind == CollectiveKind::reduce;
  const int steps = all_reduce ? 2 * (n - 1) : n - 1;
  const int inter_steps = nodes > 1 ? (all_reduce ? 2 * (nodes - 1) : nodes - 1) : 0;
  c.latency_us += (steps - inter_steps) * intra_step_us(hw, q.protocol) +
                  inter_steps * inter_step_us(hw, q.protocol);

  constexpr double inf = std::numeric_limits<double>::infinity();
  const double intra = g > 1 ? (g == 2 ? hw.intra_pair_bw : hw.intra_bw) : inf;
  const double inter = nodes > 1 ? hw.node_net_bw : inf;
  const double busbw = channel_capped(hw, q.protocol, q.channels, std::min(intra, inter));
  c.algbw_gbytes = busbw / busbw_factor(q.kind, n);
  const double per_hop = chain ? q.bytes : q.bytes / n;
  c.fill_us = pipeline_fill_us(hw, q.protocol, steps, per_hop, q.channels, busbw);
  return c;
}

}  // namespace dtsim::collectives
