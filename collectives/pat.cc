// PAT (Parallel Aggregated Trees, all_gather and reduce_scatter with one GPU per node): a
// Bruck-like schedule in log2(n) rounds of doubling distance, aggregating what each rank forwards,
// so it needs log2(n) network latencies instead of the ring's n-1, at the same bytes per NIC.
#include <algorithm>
#include <cmath>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost pat_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int rounds = n > 1 ? static_cast<int>(std::ceil(std::log2(n))) : 0;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_simple + rounds * inter_step_us(hw, q.protocol) +
                 n * hw.params.pat_rank_latency;
  // Its rounds of doubling distance reach every node: where the fabric's links are priced, an
  // all-to-all's load.
  const double net = hw.net_bw(q.shape, HardwareView::Pattern::all_to_all);
  const double busbw = channel_capped(hw, q.protocol, q.channels, net, true);
  c.algbw_gbytes = busbw / busbw_factor(q.kind, n);
  c.fill_us = pipeline_fill_us(hw, q.protocol, rounds, q.bytes / n, q.channels, busbw);
  return c;
}

}  // namespace dtsim::collectives
