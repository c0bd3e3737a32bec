// Protocol figures shared by every algorithm: per-step latency by link class, the channel rate
// caps, and the pipeline fill. LL moves 8-byte lines (4 data + 4 flag) with no barrier, so its
// steps are cheap and its rate low; LL128 uses 128-byte lines with one flag word; Simple moves
// large slices behind a memory fence, with the highest rate and the costliest step.
#include <algorithm>
#include <cmath>

#include "collectives/algorithm_cost.h"

namespace dtsim::collectives {

double intra_step_us(const HardwareView& hw, Protocol p) {
  return step_latency_us(hw.params, hw.intra_class, p);
}

double inter_step_us(const HardwareView& hw, Protocol p) {
  // Simple waits for a flush of the receive buffer (GPUDirect RDMA read-back): a read by the
  // receiving NIC of its own GPU's memory, which crosses the NIC and its link again but not the
  // network stack (an EFA step costs ~75 us, a Simple p2p message across p4d nodes 88).
  const double stack =
      hw.net_step_latency_us + (p == Protocol::simple ? hw.net_wire_latency_us : 0.0);
  return step_latency_us(hw.params, LinkClass::net, p) + stack;
}

namespace {

constexpr int kNcclSteps = 8;  // NCCL_STEPS: slots in every connection's FIFO

// Payload bytes of one FIFO slot, NCCL's default buffers over its 8 steps: Simple's NCCL_BUFFSIZE
// (4 MiB), LL's 512 KiB of 16-byte lines (half of them flags), LL128's 120 x 640 x 8 x 8 bytes
// (120 of every 128 carry data).
double slot_bytes(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return 524288.0 / 2 / kNcclSteps;
    case Protocol::ll128:
      return 4915200.0 * 120 / 128 / kNcclSteps;
    case Protocol::simple:
      break;
  }
  return 4194304.0 / kNcclSteps;
}

}  // namespace

double net_messages(Protocol p, int steps, double chunk_bytes) {
  return std::max(0, steps) * std::max(1.0, std::ceil(chunk_bytes / slot_bytes(p)));
}

double net_window_us(const HardwareView& hw, double messages) {
  if (hw.send_completion_us <= 0) return 0;
  return messages / kNcclSteps * hw.send_completion_us;
}

double channel_rate(const ModelParameters& params, Protocol p, bool network,
                    int compute_capability) {
  if (p != Protocol::ll) return params.channel_bandwidth;
  if (network) return params.ll_net_channel_bandwidth;
  return compute_capability >= 90 ? params.ll_channel_bandwidth_sm90 : params.ll_channel_bandwidth;
}

double channel_capped(const HardwareView& hw, Protocol p, int channels, double bw, bool network) {
  return std::min(bw * hw.params.bandwidth_fraction(p),
                  channel_rate(hw.params, p, network, hw.compute_capability) * channels);
}

double pipeline_fill_us(const HardwareView& hw, Protocol p, int hops, double bytes_per_hop,
                        int channels, double busbw) {
  if (hops <= 0 || busbw <= 0) return 0;
  const double held = std::min(bytes_per_hop, hw.params.slice_bytes(p) * channels);
  return std::min<double>(hops, hw.params.pipeline_max_hops) * held / (busbw * 1e3);
}

}  // namespace dtsim::collectives
