// CollNet (SHARP in the network switches, fabric.sharp): each node sends its data into the
// switch aggregation tree once and receives the result once, so the network carries the buffer
// once per direction regardless of the node count. Direct: every GPU talks to the network
// through its own NIC after an intra-node scatter (NVSwitch systems); chain: the node's ranks
// form a chain to one NIC, as the tree's intra-node part.
#include <algorithm>
#include <limits>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost collnet_direct_cost(const HardwareView& hw, const CostQuery& q) {
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_simple + hw.params.collnet_latency +
                 2.0 * (g > 1 ? intra_step_us(hw, q.protocol) : 0.0) +
                 inter_step_us(hw, q.protocol);
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Intra-node scatter and gather: each GPU sends (g-1)/g of the buffer each way.
  const double intra = g > 1 ? hw.intra_bw * g / (g - 1) : inf;
  c.algbw_gbytes = std::min(intra, hw.comm_net_bw(q.shape));
  c.fill_us =
      pipeline_fill_us(hw, q.protocol, 3, q.bytes / std::max(1, g), q.channels, c.algbw_gbytes);
  return c;
}

AlgoCost collnet_chain_cost(const HardwareView& hw, const CostQuery& q) {
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_simple + hw.params.collnet_latency +
                 2.0 * (g - 1) * intra_step_us(hw, q.protocol) + inter_step_us(hw, q.protocol);
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double chain = g > 1 ? (g == 2 ? hw.intra_pair_bw : hw.intra_bw / 2.0) : inf;
  c.algbw_gbytes = std::min(chain, hw.comm_net_bw(q.shape));
  c.fill_us = pipeline_fill_us(hw, q.protocol, 2 * g, q.bytes, q.channels, c.algbw_gbytes);
  return c;
}

}  // namespace dtsim::collectives
