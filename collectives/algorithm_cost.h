// The closed form every algorithm prices itself with: time = latency + bytes / algbw + fill, where
// latency is the launch plus the per-step latencies of the hops in sequence, algbw is what the
// bottleneck link of the algorithm's traffic pattern allows, and fill is the store-and-forward
// cost of the first slice through the pipeline. Each algorithm file (ring.cc, tree.cc, ...) gives
// one `*_cost` function; the tuner calls the ones the hardware supports.
//   AlgoCost c = ring_cost(hw, {kind, bytes, shape, Protocol::simple, channels});
//   double us = c.time_us(bytes);
#pragma once

#include <algorithm>
#include <string>

#include "collectives/collective.h"
#include "collectives/hardware_view.h"

namespace dtsim::collectives {

struct CostQuery {
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;  // nccl-tests size
  CommShape shape;
  Protocol protocol = Protocol::simple;
  int channels = 16;
};

struct AlgoCost {
  double latency_us = 0;
  double algbw_gbytes = 0;  // GB/s, nccl-tests algbw
  double fill_us = 0;
  // The least time a collective among back-to-back ones takes when its sends across nodes each
  // hold a FIFO slot for the NIC kind's send completion: a connection then sends at most
  // NCCL_STEPS (8) messages per completion, however the waits fall inside one collective, and the
  // collective's own chain of steps runs under that bound rather than after it.
  double window_us = 0;

  double time_us(double bytes) const {
    return std::max(latency_us + bytes / (algbw_gbytes * 1e3) + fill_us, window_us);
  }
};

// Pipeline fill: `hops` store-and-forward stages, each holding min(bytes per hop, one slice per
// channel) before passing it on, at `busbw` (GB/s summed over channels).
double pipeline_fill_us(const HardwareView& hw, Protocol p, int hops, double bytes_per_hop,
                        int channels, double busbw);
// The least time one channel's connection across nodes takes for `messages` sends when each holds
// its FIFO slot for a send completion (HardwareView::send_completion_us): NCCL's FIFO holds
// NCCL_STEPS (8) of them, so back-to-back collectives send at most eight per completion.
double net_window_us(const HardwareView& hw, double messages);
// Sends one connection makes for `steps` steps of `chunk_bytes` each under protocol p: a step
// larger than one FIFO slot (NCCL's buffer for p over its 8 steps) is sent as several.
double net_messages(Protocol p, int steps, double chunk_bytes);
// The rate `channels` channels of protocol p reach over links of bandwidth `bw`; `network`: the
// channels' path crosses the network (LL then moves at its network rate).
double channel_capped(const HardwareView& hw, Protocol p, int channels, double bw, bool network);
// The rate one channel of protocol p moves (GB/s of payload); LL's inside a node follows the
// GPUs' generation (compute_capability).
double channel_rate(const ModelParameters& params, Protocol p, bool network,
                    int compute_capability);
// Latency of one step over the scale-up fabric, and of one inter-node step, for protocol p.
double intra_step_us(const HardwareView& hw, Protocol p);
double inter_step_us(const HardwareView& hw, Protocol p);

AlgoCost ring_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost tree_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost nvls_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost nvls_tree_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost collnet_direct_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost collnet_chain_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost pat_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost halving_doubling_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost hierarchical_cost(const HardwareView& hw, const CostQuery& q);
// Latency of a grouped point-to-point exchange (all_to_all, gather, scatter): the launch, one
// step, and a message posted to the NIC per peer in another node.
double exchange_latency_us(const HardwareView& hw, const CostQuery& q);
AlgoCost all_to_all_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost send_recv_cost(const HardwareView& hw, const CostQuery& q);
// What a send/recv of `bytes` moving at `bytes_per_us` costs beyond its bandwidth term: one FIFO
// slot (p2p_net_chunk_bytes) across nodes, the fitted p2p_pipeline_bytes inside a node.
double p2p_fill_us(const ModelParameters& p, bool remote, double bytes, double bytes_per_us);
AlgoCost gather_scatter_cost(const HardwareView& hw, const CostQuery& q);
AlgoCost hypercube_cost(const HardwareView& hw, const CostQuery& q);

}  // namespace dtsim::collectives
