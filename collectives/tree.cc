// Tree (all_reduce): inside each node the ranks form a chain; across nodes NCCL builds two
// complementary binary trees (a double binary tree), each carrying half the data, so every node
// is a leaf in one of them. Data is reduced up and broadcast down, pipelined in slices.
// Per rank the chain carries the buffer up and down (2x the bytes per direction of a middle
// rank), and each node sends the buffer once (2 nodes) or twice (interior in one tree) into the
// network: tree wins where the network, not NVLink, is the bottleneck, and at latency, because
// it needs log2(nodes) network steps instead of 2(nodes-1).
#include <algorithm>
#include <cmath>
#include <limits>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost tree_cost(const HardwareView& hw, const CostQuery& q) {
  const int nodes = q.shape.nodes;
  const int g = q.shape.ranks_per_node;
  const int levels = nodes > 1 ? static_cast<int>(std::ceil(std::log2(nodes))) : 0;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_us(q.protocol) +
                 2.0 * ((g - 1) * intra_step_us(hw, q.protocol) + levels * inter_step_us(hw, q.protocol));
  if (q.shape.ranks <= 1) {
    c.algbw_gbytes = std::numeric_limits<double>::infinity();
    return c;
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double chain = g > 1 ? (g == 2 ? hw.intra_pair_bw : hw.intra_bw / 2.0) : inf;
  const double net = nodes > 1 ? hw.node_net_bw / (nodes == 2 ? 1.0 : 2.0) : inf;
  const double per_channel =
      (q.protocol == Protocol::ll ? hw.params.ll_channel_bandwidth / 2.0 : hw.params.tree_channel_bandwidth);
  const double algbw = std::min(std::min(chain, net) * hw.params.bandwidth_fraction(q.protocol),
                                per_channel * q.channels);
  c.algbw_gbytes = algbw;
  const int hops = 2 * (g - 1 + levels);
  c.fill_us = pipeline_fill_us(hw, q.protocol, hops, q.bytes, q.channels, algbw);
  return c;
}

}  // namespace dtsim::collectives
