// Link-level flow control choices of the packet model, and PFC's headroom. With `credits` a port
// sends only with credits for its link's receive buffer (InfiniBand); with `pfc` (priority flow
// control, IEEE 802.1Qbb, one priority) the receiver counts what its ingress queue holds and
// sends a PAUSE frame upstream above Xoff and a RESUME below Xon (docs/packet-model.md, PFC);
// `lossy` (RoCE without PFC) drops a packet that finds its ingress buffer full, and the sender
// goes back N on the receiver's NAK or its own retransmission timeout.
//   const Bytes need = network::pfc_headroom({.rate = Bandwidth::gbps(400), .latency = Time::us(1),
//                                             .back_latency = Time::us(1), .pause_time = Time::ps(1280)},
//                                            Bytes(4096));   // 100,000 + 64 + 2 x 4096 bytes
#pragma once

#include <cmath>
#include <cstdint>

#include "sim/units.h"

namespace dtsim::network {

enum class FlowControl { credits, pfc, lossy };

// Where a network switch's receive buffers come from: each link into it has its own
// buffer_per_port (dedicated), or the switch's links draw from one pool of shared_buffer bytes
// under Choudhury and Hahne's dynamic threshold ("Dynamic queue length thresholds for
// shared-memory packet switches"): a link's queue may grow only while it holds less than
// alpha x (the pool - what the switch's queues hold together). N queues congested together then
// hold alpha B / (1 + N alpha) each. Other devices keep dedicated buffers.
enum class SwitchBuffer { dedicated, shared };

// A PAUSE (or RESUME) frame: a minimum Ethernet frame.
inline constexpr Bytes kPauseFrame{64};

// One directed link as PFC's headroom sees it: the rate its sender puts bytes on the wire, its
// latency, and what a pause frame takes back to the sender: the reverse link's latency and its
// serialization of kPauseFrame.
struct PfcLink {
  Bandwidth rate;
  Time latency;
  Time back_latency;
  Time pause_time;
};

// The bytes an ingress buffer must hold above Xoff so that nothing overflows while a PAUSE takes
// effect: everything the sender puts on the wire from the moment the queue crosses Xoff until the
// pause reaches it, plus what was already on the wire then,
//   rate x (latency + back_latency + pause_time)      (2 x latency x rate + the frame, on a cable)
// rounded up to a byte, plus two mtu-sized packets: the one the sender is serializing when the
// pause arrives (it finishes), and the one whose arrival crosses Xoff (counted whole when its
// last byte lands, so it may overshoot Xoff by up to one mtu).
inline Bytes pfc_headroom(const PfcLink& link, Bytes mtu) {
  const auto loop_ps = static_cast<double>((link.latency + link.back_latency + link.pause_time).ps());
  const auto in_flight = static_cast<int64_t>(std::ceil(link.rate.bytes_per_s() * loop_ps / 1e12));
  return Bytes(in_flight + 2 * mtu.count());
}

}  // namespace dtsim::network
