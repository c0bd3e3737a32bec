// DCQCN's settings, apart from the packet model so that scenarios (config/scenario.h) can carry
// them without the model: network.packet.dcqcn in a scenario, PacketModelOptions::dcqcn in code.
#pragma once

#include <cstdint>

#include "sim/units.h"

namespace dtsim::network {

// DCQCN, RoCE's congestion control (Zhu et al., "Congestion Control for Large-Scale RDMA
// Deployments", SIGCOMM 2015), with that paper's settings:
//  - congestion point: a switch's egress port marks a packet joining its queue with probability 0
//    up to kmin queued bytes, rising linearly to pmax at kmax, and 1 above kmax (RED/ECN);
//  - notification point: the destination NIC answers a marked packet with a CNP to the sender, at
//    most one per transfer per cnp_interval; a CNP is a packet of kCnpBytes that travels the
//    marked packet's route in reverse, serialized and queued at every port like any packet;
//  - reaction point: a CNP sets target = current rate, current *= (1 - alpha / 2) (never under
//    min_rate), alpha = (1 - g) alpha + g; alpha decays by (1 - g) every alpha_period without a
//    CNP. Rate increase events come every increase_period and every byte_counter bytes sent since
//    the last decrease: the first `fast_recovery` of each kind halve the distance to the target
//    (current = (target + current) / 2), later ones first raise the target by additive_increase
//    (hyper_increase times i once both kinds are i past fast_recovery). Rates never exceed the
//    sender's first link. A transfer starts at that line rate with alpha 1.
// Timer-driven changes are applied when the sender next injects or takes a CNP, in time order.
// A CNP's size as the model counts packets (no headers on any packet: the link efficiency stands
// for framing): 64 bytes, a minimum Ethernet frame, as PFC's frames. A RoCEv2 CNP's frame is 78
// bytes (a 32-byte UDP payload: BTH, 16 reserved bytes, ICRC; docs/packet-model.md, DCQCN).
inline constexpr Bytes kCnpBytes{64};

struct DcqcnOptions {
  bool enabled = false;
  Bytes kmin = Bytes(5'000);
  Bytes kmax = Bytes(200'000);
  double pmax = 0.01;
  double g = 1.0 / 256;
  Time cnp_interval = Time::us(50);
  Time alpha_period = Time::us(55);
  Time increase_period = Time::us(55);
  Bytes byte_counter = Bytes(10'000'000);
  int fast_recovery = 5;
  Bandwidth additive_increase = Bandwidth::gbps(0.04);  // 40 Mb/s
  Bandwidth hyper_increase = Bandwidth::gbps(0.4);     // 400 Mb/s: our choice, ten times AI
  Bandwidth min_rate = Bandwidth::gbps(0.001);         // 1 Mb/s
  uint64_t seed = 1;                                   // the marking draws
};

}  // namespace dtsim::network
