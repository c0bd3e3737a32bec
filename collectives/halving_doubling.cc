// Recursive halving-doubling (all_reduce; Rabenseifner): log2(n) rounds of reduce-scatter with
// the partner at distance n/2, n/4, ... exchanging half of what remains, then the mirror
// all-gather. The same bytes as a ring in 2 log2(n) latencies; the early, large exchanges go
// to far partners, so across nodes they run at the NIC rate. Not an NCCL algorithm: the tuner
// uses it only when asked.
#include <algorithm>
#include <cmath>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

AlgoCost halving_doubling_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int g = q.shape.ranks_per_node;
  AlgoCost c;
  c.latency_us = hw.params.base_latency_us(q.protocol);
  const int rounds = n > 1 ? static_cast<int>(std::ceil(std::log2(n))) : 0;
  double bw_time_us = 0;
  double remaining = q.bytes;
  for (int r = 0, dist = std::max(1, n / 2); r < rounds; ++r, dist = std::max(1, dist / 2)) {
    remaining /= 2;
    const bool remote = dist >= g && q.shape.nodes > 1;
    const double bw = channel_capped(hw, q.protocol, q.channels, remote ? hw.gpu_net_bw : hw.intra_bw);
    const double step = remote ? inter_step_us(hw, q.protocol) : intra_step_us(hw, q.protocol);
    // One round of halving and its mirror round of doubling move the same bytes.
    bw_time_us += 2.0 * remaining / (bw * 1e3);
    c.latency_us += 2.0 * step;
  }
  c.algbw_gbytes = bw_time_us > 0 ? q.bytes / (bw_time_us * 1e3) : 1e30;
  return c;
}

}  // namespace dtsim::collectives
