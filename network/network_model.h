// NetworkModel: the one contract every fidelity level implements. A caller starts a transfer of
// bytes between two GPUs at the engine's current time; the model schedules the caller's handler
// when the last byte has arrived. The analytical model prices each transfer in closed form (no
// contention); the flow model shares link capacity max-min fairly among concurrent transfers;
// the packet model moves packets through queues. Collectives and workloads see only this.
//   model.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/units.h"
#include "topology/cluster.h"

namespace dtsim::network {

// The share of each kind of link's line rate that traffic reaches: what NCCL's copy kernels get
// out of NVLink, what headers leave of a NIC's wire rate. The flow and packet models run their
// links at line rate times this; 1 everywhere is the bare fabric.
struct LinkEfficiency {
  double nvlink = 1;
  double pcie = 1;
  double network = 1;
  double of(topology::LinkKind k) const {
    return k == topology::LinkKind::nvlink ? nvlink
           : k == topology::LinkKind::pcie ? pcie
                                           : network;
  }
};

struct Transfer {
  int src_gpu = 0;
  int dst_gpu = 0;
  Bytes bytes;
  uint64_t flow_hash = 0;  // picks among equal-cost paths; give each concurrent flow its own
  int nic = -1;            // the NIC slot its channel is pinned to (Cluster::route_nic); -1: by hash
  // Bytes per second the sender's channel (one thread block) can move at most, whatever the links
  // give; 0: no limit. The flow model caps the transfer's flow (its sprayed sub-flows share the
  // cap); the packet model paces its injection to it.
  double max_rate = 0;
  // Set: told when the transfer's last byte has left its sender, its bytes drained from the
  // sender's side (drained->on_event(engine, drained_payload), in an event at that instant at the
  // sender's site, at or before the completion). A channel's next send to the same peer follows
  // from then, as NCCL sends a connection's steps back to back (ScheduleExecutor).
  sim::EventHandler* drained = nullptr;
  uint64_t drained_payload = 0;
};

// The route between a transfer's GPUs whatever its size: ECMP keyed by the low 16 bits of its
// flow hash (the key the route cache and every model share) and its NIC slot; empty for a
// transfer to itself.
inline std::vector<topology::LinkId> transfer_route(const topology::Cluster& cluster, const Transfer& t) {
  if (t.src_gpu == t.dst_gpu) return {};
  if (t.nic >= 0) return cluster.route_nic(t.src_gpu, t.dst_gpu, t.flow_hash & 0xffff, t.nic);
  return cluster.route(t.src_gpu, t.dst_gpu, t.flow_hash & 0xffff);
}
// transfer_route's route appended to `out` (Cluster::append_route), for a caller that routes
// transfer after transfer into one vector.
inline void append_transfer_route(const topology::Cluster& cluster, const Transfer& t,
                                  std::vector<topology::LinkId>& out) {
  if (t.src_gpu != t.dst_gpu) cluster.append_route(t.src_gpu, t.dst_gpu, t.flow_hash & 0xffff, t.nic, out);
}

// Whether a transfer from `src_gpu` to `dst_gpu` is sprayed over several routes: under adaptive
// routing (ClusterSpec::adaptive_routing), between nodes.
inline bool sprayed(const topology::Cluster& cluster, int src_gpu, int dst_gpu) {
  return cluster.spec().adaptive_routing() && cluster.node_of(src_gpu) != cluster.node_of(dst_gpu);
}

// The routes between a transfer's GPUs under the cluster's routing mode, whatever its size, added
// to `out`, each as one route: with adaptive routing (ClusterSpec::adaptive_routing) a transfer
// between nodes is sprayed over up to kSprayRoutes equal-cost routes
// (Cluster::append_sprayed_routes, keyed as transfer_route keys its one route, which comes
// first); under ECMP, or inside a node, transfer_route's route alone. None for a transfer to
// itself.
inline void append_transfer_routes(const topology::Cluster& cluster, const Transfer& t, topology::RouteSet& out) {
  if (t.src_gpu == t.dst_gpu) return;
  if (sprayed(cluster, t.src_gpu, t.dst_gpu)) {
    cluster.append_sprayed_routes(t.src_gpu, t.dst_gpu, t.flow_hash & 0xffff, t.nic, topology::kSprayRoutes, out);
    return;
  }
  const size_t before = out.links.size();
  append_transfer_route(cluster, t, out.links);
  if (out.links.size() > before) out.end_route();
}
// The same routes as lists.
inline std::vector<std::vector<topology::LinkId>> transfer_routes(const topology::Cluster& cluster, const Transfer& t) {
  topology::RouteSet routes;
  append_transfer_routes(cluster, t, routes);
  return routes.lists();
}

// The links a transfer's bytes cross: transfer_route's path, empty for a transfer to itself or of
// no bytes.
inline std::vector<topology::LinkId> transfer_path(const topology::Cluster& cluster, const Transfer& t) {
  if (t.bytes.count() <= 0) return {};
  return transfer_route(cluster, t);
}

// The routes a transfer's bytes take (transfer_routes); empty for a transfer to itself or of no
// bytes.
inline std::vector<std::vector<topology::LinkId>> transfer_paths(const topology::Cluster& cluster, const Transfer& t) {
  if (t.bytes.count() <= 0) return {};
  return transfer_routes(cluster, t);
}

// transfer_paths' routes, put in `out` (cleared first): a caller that routes transfer after
// transfer into one set stops allocating once the set has grown.
inline void route_transfer(const topology::Cluster& cluster, const Transfer& t, topology::RouteSet& out) {
  out.clear();
  if (t.bytes.count() > 0) append_transfer_routes(cluster, t, out);
}

// What a transfer of no bytes between two GPUs costs: a message (NCCL's flag) still travels the
// route, so it arrives after the route's link latencies. Zero for a transfer to itself.
inline Time route_latency(const topology::Cluster& cluster, std::span<const topology::LinkId> route) {
  Time latency = Time::zero();
  const std::span<const topology::Link> links = cluster.links();  // one virtual call, not one a link
  for (topology::LinkId l : route) latency += links[l].latency;
  return latency;
}
inline Time empty_message_latency(const topology::Cluster& cluster, const Transfer& t) {
  return route_latency(cluster, transfer_route(cluster, t));
}

// Route i's share of `bytes` sprayed over k routes: bytes / k, and one byte more for each of the
// first bytes mod k routes, so the shares sum to `bytes`.
inline Bytes spray_share(Bytes bytes, size_t i, size_t k) {
  const auto n = static_cast<int64_t>(k);
  return Bytes(bytes.count() / n + (static_cast<int64_t>(i) < bytes.count() % n ? 1 : 0));
}

// What a network model did over a run, for `simulate --stats`: transfers started, max-min solves
// and the flows they solved for (flows), packets put on a link (packets). Zero where a model has
// none of them.
struct NetworkCounters {
  uint64_t transfers = 0;
  uint64_t solves = 0;
  uint64_t flows = 0;
  uint64_t packets = 0;
  // The packet model's PFC (network/packet/pfc.h): PAUSE frames sent, time ports spent paused
  // (summed over ports), the most bytes an ingress queue held; zero with credits.
  uint64_t pause_frames = 0;
  Time paused{};
  Bytes peak_ingress{};
  // Its lossy mode: packets dropped at full buffers, and packets sent again.
  uint64_t drops = 0;
  uint64_t retransmitted = 0;
  // ECN marks at switch egress (DCQCN or DCTCP), and DCTCP's congestion window cuts.
  uint64_t ecn_marks = 0;
  uint64_t window_cuts = 0;
  NetworkCounters& operator+=(const NetworkCounters& o) {
    transfers += o.transfers;
    solves += o.solves;
    flows += o.flows;
    packets += o.packets;
    pause_frames += o.pause_frames;
    paused += o.paused;
    peak_ingress = std::max(peak_ingress, o.peak_ingress);
    drops += o.drops;
    retransmitted += o.retransmitted;
    ecn_marks += o.ecn_marks;
    window_cuts += o.window_cuts;
    return *this;
  }
  bool operator==(const NetworkCounters&) const = default;
};

// One port's (one directed link's) share of what the packet model counts, over a run: the most
// bytes waiting to be sent on it (its egress queue), the most bytes the receive buffer at the
// link's far end held (PFC and lossy), the PAUSE frames that reached it and the time it spent
// paused (a pause counted once resumed), the packets dropped at that full receive buffer
// (lossy), and the packets it marked ECN (DCQCN, at a switch). Summed over ports the counts are
// NetworkCounters' totals, and the peaks' largest is the run's peak.
struct PortStats {
  Bytes peak_egress{};
  Bytes peak_ingress{};
  uint64_t pause_frames = 0;
  Time paused{};
  uint64_t drops = 0;
  uint64_t ecn_marks = 0;
  bool operator==(const PortStats&) const = default;
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual std::string_view name() const = 0;
  // Begins `t` at engine.now(); calls done.on_event(engine, payload) when it completes, and
  // t.drained's handler when its bytes have drained from the sender (Transfer::drained).
  virtual void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                     uint64_t payload) = 0;
  // Bytes delivered so far, over all transfers (conservation checks compare it with bytes sent).
  virtual Bytes bytes_delivered() const = 0;
  virtual NetworkCounters counters() const { return {}; }
  // What the model counts at `link`'s port (PortStats); none for a model without ports (flows,
  // the closed form).
  virtual std::optional<PortStats> port_stats(topology::LinkId link) const {
    (void)link;
    return std::nullopt;
  }
  // The engine site (sim/event.h) where `gpu`'s events run; a transfer from it starts in an event
  // at that site. Models whose state is not kept by site run everything at site 0.
  virtual sim::Site site_of_gpu(int gpu) const {
    (void)gpu;
    return 0;
  }
};

}  // namespace dtsim::network
