// all_to_all: NCCL runs it as a grouped pairwise exchange, every rank sending size/n to every
// other rank at once. Peers in the node are reached over the scale-up fabric; peers in other
// nodes through the network, where (with PXN) a rank's messages leave through the NIC on its
// rail: one flow cannot spread over several NICs, so the rate per rank is one NIC's share.
#include <algorithm>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

double exchange_latency_us(const HardwareView& hw, const CostQuery& q) {
  const bool remote = q.shape.nodes > 1;
  const int remote_peers = q.shape.ranks - q.shape.ranks_per_node;
  return hw.params.p2p_latency +
         (remote ? inter_step_us(hw, q.protocol) + remote_peers * hw.message_overhead_us
                 : intra_step_us(hw, q.protocol));
}

AlgoCost all_to_all_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int g = q.shape.ranks_per_node;
  const auto& p = hw.params;
  AlgoCost c;
  const bool remote = q.shape.nodes > 1;
  c.latency_us = exchange_latency_us(hw, q);
  if (n <= 1) {
    c.algbw_gbytes = 1e30;
    return c;
  }
  const double share = q.bytes / n;
  double t_us = 0;
  if (g > 1) t_us = std::max(t_us, (g - 1) * share / (hw.intra_bw * p.all_to_all_efficiency * 1e3));
  if (remote) {
    const double nic = hw.exchange_gpu_bw(q.shape);
    t_us = std::max(t_us, (n - g) * share / (nic * 1e3));
  }
  // LL and LL128 carry flags beside the data, as for every other algorithm: large exchanges
  // run Simple (NCCL's p2p uses LL only for small messages).
  c.algbw_gbytes = t_us > 0 ? q.bytes / (t_us * 1e3) * p.bandwidth_fraction(q.protocol) : 1e30;
  return c;
}

}  // namespace dtsim::collectives

// Lowering to transfers (schedule.h).

namespace dtsim::collectives {

Schedule all_to_all_schedule(Bytes bytes, const Communicator& comm, int channels) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  for (int c = 0; c < channels; ++c) {
    // Pairwise exchange: in round k every rank sends to the rank k places ahead, all at once;
    // a rank's buffer holds a block per destination, each split over the channels.
    for (int k = 1; k < n; ++k) {
      for (int r = 0; r < n; ++r) {
        const int to = (r + k) % n;
        s.add(comm.ranks[static_cast<size_t>(r)], comm.ranks[static_cast<size_t>(to)],
              part_of(part_of(bytes, n, to), channels, c), {}, Bytes(0), k, c);
      }
    }
  }
  return s;
}

}  // namespace dtsim::collectives
