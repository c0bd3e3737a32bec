// run_ns3: the PeerCase on ns-3 (3.37, Debian's libns3-dev), packet by packet: a node per dtsim
// host (its GPU, PCIe and NIC as one) and per network switch, a point-to-point link per dtsim
// network link (same bandwidth times the efficiency, same latency), the Internet stack with
// global routing and per-packet random ECMP (Ipv4GlobalRouting::RandomEcmpRouting, ns-3's only
// multipath choice: a uniform draw among the equal-cost next hops for every packet at every hop,
// the counterpart of dtsim's spraying, packet j on route j mod K), and UDP senders at line rate.
// dtsim's packet model and ns-3 then move the same packets over the same fabric; packet_vs_ns3
// compares them.
//   PeerRun r = run_ns3(*cluster, flows, efficiency, {.mtu = Bytes(4096), .seed = 1});
#pragma once

#include <cstdint>
#include <span>

#include "bench/peers/peer_run.h"
#include "topology/cluster.h"

namespace dtsim::bench::peers {

// Bytes of headers on every ns-3 packet's wire: UDP 8, IPv4 20, the point-to-point link's PPP 2.
// A packet of w bytes on the wire carries w - kNs3HeaderBytes of UDP payload.
inline constexpr int64_t kNs3HeaderBytes = 30;

struct Ns3Options {
  Bytes mtu{4096};    // bytes on the wire of every packet but a flow's last (headers included)
  uint64_t seed = 1;  // ns-3's RngSeedManager seed (the ECMP draws)
};

// Runs ns-3 in this process; its simulator is a singleton, so at most once per process (it
// switches ns-3's time resolution to picoseconds, as dtsim's). Every host's sender cuts each of
// its flows into packets of options.mtu bytes on the wire, the last one shorter, and sends them
// round robin over its flows, back to back at its link's rate (paced by a timer, so its device
// queue never grows); queue discs are removed and device queues hold a million packets, so
// nothing drops. A flow completes when its receiver's socket has had every byte. wall_s counts
// building the ns-3 nodes, links, stacks and routes and running, not the cluster graph's
// construction. Throws std::runtime_error when a flow never completes (were packets dropped),
// std::invalid_argument when two flows join the same host pair, a flow stays
// inside a host, a host has more than one GPU, or mtu is not above the headers.
PeerRun run_ns3(const topology::Cluster& cluster, std::span<const network::Transfer> flows,
                const network::LinkEfficiency& efficiency, const Ns3Options& options);

}  // namespace dtsim::bench::peers
