// gather and scatter: nccl-tests' gather_perf and scatter_perf, which NCCL runs as grouped
// point-to-point operations (native ncclGather/ncclScatter from NCCL 2.28 do the same): in a
// gather every rank sends its part (size/n of the nccl-tests size, the root's whole buffer) to the
// root, which receives them all at once; a scatter is the reverse. The root's links carry n-1
// parts, every other rank's one, so the root's links set the time.
//
// Across nodes NCCL's PXN sends a message out through the NIC on the destination's rail, relayed
// over NVLink by the sender's node-mate on that rail. A scatter's parts for remote ranks thus
// leave the root's node through every NIC of the communicator's ranks there, while a gather's
// all arrive through the NIC on the root's rail.
#include <algorithm>

#include "collectives/algorithm_cost.h"
#include "collectives/lowerings.h"
#include "collectives/schedule.h"

namespace dtsim::collectives {

AlgoCost gather_scatter_cost(const HardwareView& hw, const CostQuery& q) {
  const int n = q.shape.ranks;
  const int g = q.shape.ranks_per_node;
  const auto& p = hw.params;
  const bool remote = q.shape.nodes > 1;
  AlgoCost c;
  c.latency_us = exchange_latency_us(hw, q);
  if (n <= 1) {
    c.algbw_gbytes = 1e30;
    return c;
  }
  const double share = q.bytes / n;
  const double scale_up = hw.intra_bw * p.all_to_all_efficiency * 1e3;  // bytes per us
  double t_us = 0;
  if (q.kind == CollectiveKind::scatter) {
    // The root's NVLink carries its node-mates' parts and, where PXN relays, the remote parts
    // bound for the other g-1 rails; the node's NICs carry the remote parts.
    const double relayed = remote ? (n - g) * share * (g - 1) / g : 0.0;
    if (g > 1) t_us = std::max(t_us, ((g - 1) * share + relayed) / scale_up);
    if (remote) t_us = std::max(t_us, (n - g) * share / (hw.comm_net_bw(q.shape) * 1e3));
  } else {
    // The root's NVLink takes its node-mates' parts; its own NIC takes every remote part.
    if (g > 1) t_us = std::max(t_us, (g - 1) * share / scale_up);
    if (remote) t_us = std::max(t_us, (n - g) * share / (hw.single_nic_bw * 1e3));
  }
  c.algbw_gbytes = t_us > 0 ? q.bytes / (t_us * 1e3) * p.bandwidth_fraction(q.protocol) : 1e30;
  // As for send_recv: the copy out of a connection's FIFO starts once it holds data.
  c.fill_us = std::min(q.bytes, p.p2p_pipeline_bytes) / (c.algbw_gbytes * 1e3);
  return c;
}

Schedule gather_scatter_schedule(CollectiveKind kind, Bytes bytes, const Communicator& comm,
                                 int channels, int ranks_per_node) {
  Schedule s;
  const int n = comm.size();
  if (n <= 1) return s;
  const int g = std::max(1, ranks_per_node);
  const auto gpu = [&](int index) { return comm.ranks[static_cast<size_t>(index)]; };
  const bool gather = kind == CollectiveKind::gather;
  for (int c = 0; c < channels; ++c) {
    for (int r = 1; r < n; ++r) {
      const Bytes piece = part_of(part_of(bytes, n, r), channels, c);
      // PXN's relay: the rank on the receiver's rail in the sender's node (ranks come in node
      // blocks of g, the root first). NCCL pipelines the relay in small chunks, so its two legs
      // run at once.
      const int relay = r < g ? r : gather ? (r / g) * g : r % g;
      const int from = gather ? r : 0;
      const int to = gather ? 0 : r;
      if (relay == from || relay == to) {
        s.add(gpu(from), gpu(to), piece, {}, Bytes(0), 0, c);
      } else {
        s.add(gpu(from), gpu(relay), piece, {}, Bytes(0), 0, c);
        s.add(gpu(relay), gpu(to), piece, {}, Bytes(0), 1, c);
      }
    }
  }
  return s;
}

}  // namespace dtsim::collectives
