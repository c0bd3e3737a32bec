// send_recv: one point-to-point transfer between two ranks (nccl-tests sendrecv: every rank
// sends to its successor and receives from its predecessor at once). Over NVLink it is a copy
// kernel at p2p_efficiency of the ring's link rate; across nodes one NIC carries it.
#include <algorithm>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

AlgoCost send_recv_cost(const HardwareView& hw, const CostQuery& q) {
  const bool remote = q.shape.nodes > 1;
  const auto& p = hw.params;
  AlgoCost c;
  c.latency_us =
      p.p2p_latency + (remote ? inter_step_us(hw, q.protocol) : intra_step_us(hw, q.protocol));
  const int g = q.shape.ranks_per_node;
  const double link = remote ? std::min({hw.single_nic_bw, hw.gpu_net_bw, hw.fabric_rates(q.shape).ring})
                             : (g == 2 ? hw.intra_pair_bw : hw.intra_bw) * p.p2p_efficiency;
  c.algbw_gbytes = link * p.bandwidth_fraction(q.protocol);
  c.fill_us = p2p_fill_us(p, remote, q.bytes, c.algbw_gbytes * 1e3);
  return c;
}

double p2p_fill_us(const ModelParameters& p, bool remote, double bytes, double bytes_per_us) {
  if (bytes_per_us <= 0) return 0;
  // Across nodes the receiver copies each chunk out of its FIFO slot as soon as it lands, so the
  // transfer runs at the wire's rate after one chunk. Inside a node: the fitted intercept.
  const double held = remote ? p.p2p_net_chunk_bytes : p.p2p_pipeline_bytes;
  return std::min(bytes, held) / bytes_per_us;
}

}  // namespace dtsim::collectives

// Lowering to transfers (schedule.h).

namespace dtsim::collectives {

Schedule send_recv_schedule(Bytes bytes, const Communicator& comm, int channels) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  for (int c = 0; c < channels; ++c) {
    const Bytes piece = part_of(bytes, channels, c);
    for (int r = 0; r < n; ++r) {
      s.add(comm.ranks[static_cast<size_t>(r)], comm.ranks[static_cast<size_t>((r + 1) % n)], piece,
            {}, Bytes(0), 0, c);
    }
  }
  return s;
}

}  // namespace dtsim::collectives
