// DCTCP's settings, apart from the packet model so that scenarios (config/scenario.h) can carry
// them without the model: network.packet.dctcp in a scenario, PacketModelOptions::dctcp in code.
//   PacketModelOptions options{.dctcp = {.enabled = true, .k = Bytes::kib(64)}};
#pragma once

#include "sim/units.h"

namespace dtsim::network {

// DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010), a window-based sender for TCP NICs:
//  - switch egress: a packet joining a queue of more than k bytes (itself included) is marked ECN
//    with probability 1 (step marking; the paper's guidance is K > C x RTT / 7);
//  - receiver: every data packet is acknowledged at once (no delayed ACKs), the ACK echoing its
//    mark (ECE); an ACK takes the route's reverse latencies back and no bandwidth, as a CNP does;
//  - sender: at most cwnd bytes in flight (sent, not yet acknowledged), from initial_window. Each
//    ACK grows cwnd by its bytes in slow start and by mtu x bytes / cwnd after (one mtu per round
//    trip). Once per window of data (the bytes in flight when the window began have all been
//    acknowledged) alpha = (1 - g) alpha + g F, F the fraction of that window's acknowledged bytes
//    that were marked. The first marked ACK of a window (one sent after the last cut) cuts
//    cwnd = cwnd (1 - alpha / 2), never under one mtu, and ends slow start, as Linux's DCTCP
//    reacts; alpha starts at 1, Linux's default.
// Runs on credits or PFC; the lossy mode's go-back-N is not combined with it (refused).
struct DctcpOptions {
  bool enabled = false;
  Bytes k = Bytes::kib(100);
  double g = 1.0 / 16;
  Bytes initial_window = Bytes(10 * 4096);
  bool slow_start = true;
};

}  // namespace dtsim::network
