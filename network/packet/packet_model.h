// PacketNetworkModel: the packet-level NetworkModel. A transfer is cut into packets of at most
// `mtu` bytes that travel its routed path (cluster.route(src, dst, flow_hash)), or with adaptive
// routing its sprayed routes in turn, packet j on route j mod K (transfer_paths); every directed
// link is an output port serializing one packet at a time at the link's bandwidth,
// store-and-forward, and the packet reaches the next device a link latency later. The fabric is
// lossless with link-level credits, as InfiniBand's: each link has a receive buffer at its far
// end, its port sends a packet only with credits for the packet's bytes, and the credits come
// back over the reverse link, a latency after the packet has left that buffer (several packets'
// in one update while the port is far from its limit, which moves no time: credit_batch). An
// output port serves its input ports round robin. A transfer completes when its last packet
// arrives. Pick it with `--model packet`.
// With flow_control = pfc the credits give way to PFC (network/packet/pfc.h): each ingress queue
// (the receive buffer at a link's far end) counts its bytes, and above Xoff = buffer - headroom
// its device sends a PAUSE back over the reverse link that stops the upstream port from starting
// packets until a RESUME follows below Xon. With flow_control = lossy (RoCE without PFC) a packet
// that finds that buffer full is dropped, and its transfer's sender goes back N on the
// receiver's NAK or on its own retransmission timeout.
// With DCQCN on (RoCE), switch egress ports mark packets ECN by their queue, the receiving NIC
// returns congestion notifications (64-byte packets that cross the route back, kCnpBytes), and
// each transfer's sender paces its packets at a rate that falls on a notification and recovers
// without one (DcqcnOptions).
// With DCTCP on (TCP NICs), switch egress ports mark packets above a queue of k bytes, the
// receiver acknowledges every packet echoing its mark, and each transfer that crosses the network
// keeps at most a congestion window of bytes in flight, cut by the fraction of marks (DctcpOptions).
//   network::PacketNetworkModel net(cluster, {.mtu = Bytes(4096), .buffer_per_port = Bytes::mib(32)});
//   net.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
//
// Sites and partitions: the model's engine sites (sim/event.h) are the cluster's devices, and every
// piece of mutable state belongs to one device, the one where the events that touch it run, so
// that a partitioned engine (sim/partitioned_engine.h, cut by network/packet/partition.h) gives
// each device's state to one thread and only events that travel a link cross between them:
//  - Port l (device from(l)): its input FIFOs, round robin, injection list, pacing wake-up, the
//    packet on its serializer, its credits in use, its queued bytes and ECN RNG stream (DCQCN
//    marks at a switch egress), bytes_sent, and its PortStats counters (peak queue, pauses taken,
//    time paused, marks) and samples.
//  - Packets and credits in flight travel as events: a packet's fields ride in the arrival event
//    (payload and aux), and the device it reaches makes it a packet of its own partition's pool.
//  - A transfer's sender (the source GPU): unsent and cut (in its Routes record), high, its
//    ReactionPoint (pacing, DCQCN rate), its DCTCP Window (cwnd, bytes in flight, alpha), which
//    its ACK events update, and its slot, which lives in the sender's partition and is given back
//    when the receiver's acknowledgement arrives (a route's reverse latency after the last packet).
//  - Credits held back for link l (CreditReturn, device to(l)): what l's far end has freed and not
//    returned, and what l's port last said it had in use, which rides in each packet's event.
//  - Ingress queue l (device to(l), PFC and lossy): its bytes, peak and drops, and whether it has
//    paused l's port;
//    the port itself (device from(l)) holds whether it is paused, which only PAUSE and RESUME
//    events set.
//  - Lossy: the sender's go-back state (acked, high, backoff, its timer) is the source GPU's, the
//    receiver's order (received, last_seq, nak_pending) the destination's; NAKs travel the
//    reverse route as events, as CNPs do.
//  - A transfer's last link's port (from(last link)): Routes::to_leave, the packets still to
//    leave on it.
//  - A transfer's receiver (the destination GPU): received, last_cnp_sent (the CNP rate limit),
//    cnps_sent (which its acknowledgement carries back). A CNP is a packet: it travels the route
//    back as events, as data does; the sender counts the CNPs back (cnps_back) and frees its slot
//    once the acknowledgement and every CNP are in.
//  - Immutable from start to acknowledgement, read anywhere as a packet header would carry it:
//    its Routes (but to_leave, unsent and cut; paths too where routes differ in length), packets
//    (the count), cap, done and payload.
//  - Counters and pools: one set per partition (Shard), added up when read.
// A transfer must start in an event at its source GPU's site (as the schedule executor's do);
// with one partition the model runs on a plain Engine.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "network/network_model.h"
#include "network/packet/dcqcn.h"
#include "network/packet/dctcp.h"
#include "network/packet/pfc.h"
#include "network/packet/port_timeline.h"
#include "sim/block_arena.h"
#include "sim/rng.h"
#include "sim/stable_pool.h"
#include "topology/cluster.h"

namespace dtsim::network {

struct PacketModelOptions {
  Bytes mtu{4096};                       // largest packet payload; the last of a transfer is shorter
  // The receive buffer at the far end of every link that ends at a switch or forwards (a packet
  // whose path ends at the link's GPU takes no credits); at least one mtu.
  Bytes buffer_per_port = Bytes::mib(32);
  DcqcnOptions dcqcn;
  // Ports serialize at line rate x this (NetworkModel's LinkEfficiency).
  LinkEfficiency link_efficiency;
  // Credits (lossless by construction) or PFC's pause frames; with PFC every link's buffer must
  // cover its headroom (pfc_headroom), and Xoff = buffer_per_port - headroom.
  FlowControl flow_control = FlowControl::credits;
  // Lossy: a sender whose last packet left this long ago without the transfer's completion
  // reaching it goes back to the first packet the receiver has not confirmed.
  Time retransmit_timeout = Time::us(100);
  // TCP's congestion control: a window per transfer, step ECN marking at switch egress.
  DctcpOptions dctcp{};
  // Zero: no sampling. Otherwise every port's egress queue is sampled at each multiple of this
  // (port_timelines) and its pauses are kept, from the ports' own state as it changes: sampling
  // schedules no event, so the run, its counters and its fingerprint are the same without it.
  Time sample_interval = Time::zero();
  // Credits with dedicated buffers: a link's far end may return the credits of several packets
  // in one update of at most this many bytes (at least one packet's), but only while the
  // link's port is provably far from its limit, so that no port ever waits on a credit later
  // than it would with an update per packet: times and every byte sent are the same, with fewer
  // events (docs/packet-model.md, Speed). Zero: an update per packet.
  Bytes credit_batch = Bytes::kib(64);
  // Credits with dedicated buffers and no pacing: a GPU's port that sends its transfers' full
  // packets back to back, in its turn over them, with nothing else to send, cuts up to this many
  // at once, queuing their arrivals and one finish after the last instead of a finish per packet.
  // Whatever reaches the port before the later ones would have started (another transfer, a
  // packet to pass on) takes those back, as if they had been cut one at a time: times, bytes and
  // counters are the same, with fewer events (docs/packet-model.md, Speed). 1: a finish per
  // packet. At most 255.
  uint32_t burst = 16;
  // Credits with dedicated buffers and no pacing: a port that forwards (none of its device's
  // transfers injecting there) and finds several inputs in its round robin, each head packet with
  // its credits at hand, serves up to this many of them, in ring order, in one step: it sends
  // their packets, queuing their arrivals and one finish after the last, and its ring, queued
  // bytes and credits in use catch up with each packet's start at its next event (settle_round).
  // Nothing that reaches the port meanwhile changes whom the round serves (a newcomer joins the
  // ring behind it, and credits only come back), so times, bytes and counters are the same, with
  // fewer events (docs/packet-model.md, Speed). Credit batches cap it where buffers are small.
  // 1: a finish per packet. At most 16.
  uint32_t round = 16;
  // Credits with dedicated buffers and no pacing: a packet that arrives at a device whose port
  // onto its route's last link is idle, with nothing queued, leaves at once in one step that
  // reads its transfer's routes once and builds no packet (PacketNetworkModel::pass_last).
  // false: through the general hop (take_in, forward), with the same events, times and counters;
  // a check for tests.
  bool pass_last = true;
  // Dedicated buffers (buffer_per_port per link) or, at network switches, one pool per switch of
  // shared_buffer bytes under the dynamic threshold dt_alpha (SwitchBuffer): with credits a link
  // is granted room only while what it holds (granted, not yet freed) is below the threshold;
  // with PFC a link pauses above it, each link's headroom set aside from the pool; lossy drops a
  // packet that finds its queue at or above it, or the pool full.
  SwitchBuffer switch_buffer = SwitchBuffer::dedicated;
  Bytes shared_buffer = Bytes::mib(32);
  double dt_alpha = 1;
};

class PacketNetworkModel final : public NetworkModel, private sim::EventHandler {
 public:
  // `cluster` must outlive the model. The model is the handler of its own events, so it neither
  // copies nor moves. Throws std::invalid_argument when mtu is not positive, a buffer cannot
  // hold one mtu, the links do not come in pairs (l, l ^ 1) of the two directions, or (PFC) a
  // link's buffer is below its headroom (pfc_shortfall's line).
  PacketNetworkModel(const topology::Cluster& cluster, PacketModelOptions options = {});
  PacketNetworkModel(const PacketNetworkModel&) = delete;
  PacketNetworkModel& operator=(const PacketNetworkModel&) = delete;

  std::string_view name() const override { return "packet"; }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
             uint64_t payload) override;
  // Bytes of every packet that has reached its destination GPU; a packet that neither completes
  // its transfer nor sends a CNP counts once it is on the last link there (it cannot be held).
  Bytes bytes_delivered() const override {
    return Bytes(static_cast<int64_t>(sum([](const Shard& sh) { return sh.delivered; })));
  }
  sim::Site site_of_gpu(int gpu) const override { return cluster_.gpu_device(gpu); }
  // Makes room for a run on a PartitionedEngine of `partitions` partitions (at most 64), before
  // any transfer starts; a plain Engine needs one, the default.
  void set_partitions(uint32_t partitions);

  // Transfers started and not yet complete.
  size_t active_transfers() const {
    return sum([](const Shard& sh) { return sh.started; }) -
           sum([](const Shard& sh) { return sh.completed; });
  }
  // Packets injected and not yet delivered.
  size_t packets_in_flight() const {
    return sum([](const Shard& sh) { return sh.injected; }) -
           sum([](const Shard& sh) { return sh.landed; });
  }
  // Most credits any link has had in use: bytes sent on it towards its receive buffer and not yet
  // returned (on the wire, in that buffer, or as credits on their way back); never above
  // buffer_per_port.
  Bytes peak_buffer_occupancy() const {
    return Bytes(peak([](const Shard& sh) { return sh.peak_occupancy; }));
  }
  // Most bytes any output port has had waiting to be sent (arrived, not yet serialized), over
  // all its inputs: the queue that DCQCN marks by.
  Bytes peak_queue() const { return Bytes(peak([](const Shard& sh) { return sh.peak_queued; })); }
  // Bytes serialized onto `link` so far.
  Bytes bytes_sent_on(topology::LinkId link) const;
  uint64_t packets_sent() const { return sum([](const Shard& sh) { return sh.packets_sent; }); }
  NetworkCounters counters() const override {
    return {.transfers = sum([](const Shard& sh) { return sh.started; }), .solves = 0, .flows = 0,
            .packets = packets_sent(), .pause_frames = pause_frames(), .paused = paused_time(),
            .peak_ingress = peak_ingress_queue(), .drops = drops(), .retransmitted = retransmitted(),
            .ecn_marks = ecn_marks(), .window_cuts = window_cuts()};
  }
  // DCQCN: packets marked ECN, and CNPs the senders took (each a kCnpBytes packet that crossed
  // the route back).
  uint64_t ecn_marks() const { return sum([](const Shard& sh) { return sh.ecn_marks; }); }
  // Packets marked ECN at one switch egress port.
  uint64_t ecn_marks_at(topology::LinkId port) const { return ports_.at(port).marked; }
  uint64_t cnps() const { return sum([](const Shard& sh) { return sh.cnps; }); }
  // DCTCP: congestion windows cut on a marked ACK (marks are ecn_marks), and the bytes waiting at
  // `port` now (arrived, not yet serialized): the queue it marks by. (A port in a round, which
  // DCTCP's pacing rules out, counts its packets as waiting until its next event.)
  uint64_t window_cuts() const { return sum([](const Shard& sh) { return sh.window_cuts; }); }
  Bytes queued_at(topology::LinkId port) const { return Bytes(ports_.at(port).queued); }

  // PFC: the headroom `link`'s ingress buffer needs (network/packet/pfc.h), from its rate at the
  // options' efficiency, its latency and its reverse link's.
  static Bytes pfc_headroom(const topology::Cluster& cluster, topology::LinkId link,
                            const PacketModelOptions& options);
  // PFC: one line naming the first link (by id) whose buffer_per_port is below its headroom and
  // how much it needs; empty when every link's buffer covers it, or with credits.
  static std::string pfc_shortfall(const topology::Cluster& cluster, const PacketModelOptions& options);
  // PFC: PAUSE frames the ingress queues sent (each is followed by one RESUME), the time ports
  // spent paused (summed over ports, a pause counted once it has been resumed), and the most
  // bytes any ingress queue has held (never above buffer_per_port when the headroom holds).
  uint64_t pause_frames() const { return sum([](const Shard& sh) { return sh.pause_frames; }); }
  Time paused_time() const {
    return Time::ps(static_cast<int64_t>(sum([](const Shard& sh) { return sh.paused_ps; })));
  }
  Bytes peak_ingress_queue() const { return Bytes(peak([](const Shard& sh) { return sh.peak_ingress; })); }
  // Shared switch buffers: one line naming the first switch whose pool cannot hold what it must
  // set aside (an mtu of credits per link into it; with PFC, every such link's headroom and an mtu
  // more); empty when every pool can, or with dedicated buffers.
  static std::string shared_shortfall(const topology::Cluster& cluster, const PacketModelOptions& options);
  // Shared switch buffers: the bytes `link` holds in its far switch's pool now (credits: granted
  // and not yet freed; PFC and lossy: in its ingress queue), 0 for a link with a dedicated buffer;
  // and the most bytes any switch's pool has held.
  Bytes pool_held(topology::LinkId link) const;
  Bytes peak_pool() const;
  // Whether `port` is paused now (a PAUSE has reached it and its RESUME has not).
  bool is_paused(topology::LinkId port) const { return ports_.at(port).paused; }
  // Lossy: packets dropped at a full ingress buffer, NAKs the receivers sent, retransmission
  // timeouts the senders took, and packets sent again (cut with a sequence number sent before).
  uint64_t drops() const { return sum([](const Shard& sh) { return sh.drops; }); }
  uint64_t naks() const { return sum([](const Shard& sh) { return sh.naks; }); }
  uint64_t timeouts() const { return sum([](const Shard& sh) { return sh.timeouts; }); }
  uint64_t retransmitted() const { return sum([](const Shard& sh) { return sh.retransmitted; }); }
  // Bursts (PacketModelOptions::burst) whose later packets were taken back.
  uint64_t bursts_taken_back() const { return sum([](const Shard& sh) { return sh.taken_back; }); }

  // What `link`'s port counted (PortStats): read after the run, or between a plain Engine's events.
  std::optional<PortStats> port_stats(topology::LinkId link) const override;
  // With sample_interval: the ports whose sampled queue left zero or that were paused, in link
  // order; the last sample is at the first tick after the queue's last change (later ticks repeat
  // it), and a pause not yet resumed ends at `end`. Empty without sampling.
  std::vector<PortTimeline> port_timelines(Time end) const;

  // Packet hops a transfer of `bytes` over `hops` links costs: one to three engine events each
  // (docs/packet-model.md, Speed).
  static uint64_t packet_hops(Bytes bytes, size_t hops, Bytes mtu);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // A transfer's id: the sender's partition in the high bits, its slot in that partition's pool.
  static constexpr int kSlotBits = 26;
  static constexpr uint32_t kSlotMask = (uint32_t{1} << kSlotBits) - 1;
  static constexpr uint32_t kMaxPartitions = uint32_t{1} << (32 - kSlotBits);

  struct Packet {
    uint32_t transfer = 0;
    uint32_t bytes = 0;
    uint32_t next = kNone;  // the next packet in the same input queue, or in the free list
    uint8_t hop = 0;        // index into its route of the link it is on or queued for
    uint8_t route = 0;      // which of the transfer's routes it takes
    bool marked : 1 = false;    // ECN congestion experienced
    bool completes : 1 = false; // the last of its transfer to leave on the transfer's one last link
    // DCQCN: a CNP going back to the transfer's sender; it travels the route in reverse, on
    // hop h the reverse of the route's link h, from the last hop down to 0.
    bool cnp : 1 = false;
    // Held at a device (set where it is cut or taken in, so that a hop reads neither the transfer's
    // record nor its route): its link is its route's last (a CNP's: it is at hop 0), and the link
    // it came over, whose credits its departure frees (kNone: cut here).
    bool last : 1 = false;
    uint32_t over = kNone;
    uint32_t seq = 0;       // lossy: its index in the transfer
  };
  // A DCQCN sender's state (DcqcnOptions); rates in bytes per second.
  struct ReactionPoint {
    double line = 0;       // the sender's first link
    double current = 0;
    double target = 0;
    double alpha = 1;
    Time next_send;        // the rate limiter's: no packet injected before
    Time last_change;      // the last decrease (or the start): timers count from here
    Time alpha_from;       // alpha decays once per alpha_period after this
    int timer_events = 0;  // increase events since the last decrease, by kind
    int byte_events = 0;
    int64_t bytes_since = 0;  // bytes injected since the last byte-counter event
  };
  // A DCTCP sender's state (DctcpOptions), in bytes of payload.
  struct Window {
    double cwnd = 0;
    double alpha = 1;
    int64_t in_flight = 0;    // sent and not yet acknowledged
    int64_t sent = 0;         // all bytes sent so far (snd_nxt)
    int64_t acked = 0;        // all bytes acknowledged (snd_una)
    int64_t window_end = 0;   // alpha's window ends once acked reaches this
    int64_t window_acked = 0; // bytes acknowledged in this window, and of them marked
    int64_t window_marked = 0;
    int64_t cut_until = 0;    // marks on data sent up to this belong to the last cut
    bool slow_start = true;
  };
  // What a packet hop reads of its transfer, kept apart from the transfer's record
  // (TransferState) in a dense pool of its own: an all-to-all's thousands of records do not stay
  // in cache; these one-line records and the few interned middles (below) take far less. The
  // sender's count of what it has cut lives here too: its every turn reads it beside the routes,
  // so that a burst over many transfers reads one line of each and no record. A route's links,
  // with routes all of `hops` links: the `head` links every route starts with, then `mid`
  // links of its own, then links every route ends with; the shared ones in `edge` (the head's,
  // then the end's), the routes' own back to back, route by route, at `middle`, interned in the
  // shard's MiddleStore, so that transfers with the same ones (between two leaves, their sprayed
  // routes in the same order) read one copy (link_at).
  static constexpr size_t kEdgeLinks = 6;
  struct alignas(64) Routes {
    const topology::LinkId* middle = nullptr;
    std::array<topology::LinkId, kEdgeLinks> edge{};
    uint8_t count = 0;  // routes: packet j takes route j mod count
    uint8_t hops = 0;   // 0: routes of different lengths, read from TransferState::paths
    uint8_t head = 0;
    uint8_t mid = 0;
    bool one_last_link = true;  // every route ends on the same link
    bool windowed = false;      // DCTCP on and a route that crosses the network: `window` limits it
    // With one_last_link, the last link's port's: packets not yet left on that link.
    uint64_t to_leave = 0;
    // The sender's: bytes not yet cut into packets, and packets cut so far (the next takes route
    // cut mod count).
    int64_t unsent = 0;
    uint64_t cut = 0;
  };
  static_assert(sizeof(Routes) == 64, "a transfer's routes record fills one cache line");
  // The middles of the routes of a shard's transfers, each stored once, in an arena whose memory
  // never moves, so that a hop in another partition reads one by pointer while this shard adds
  // more.
  struct MiddleStore {
    std::unique_ptr<sim::BlockArena> arena = std::make_unique<sim::BlockArena>();
    // By a hash of the links: where each middle lies and how many links it has.
    std::unordered_multimap<uint64_t, std::pair<const topology::LinkId*, size_t>> index;
    std::vector<topology::LinkId> scratch;  // set_routes gathers a transfer's middles here
  };
  // One transfer's state, by the device that owns each part (top of this file).
  struct TransferState {
    // Immutable from start to acknowledgement.
    // The routes where they differ in length (Routes::hops is 0); empty otherwise: Routes has them.
    std::vector<std::vector<topology::LinkId>> paths;
    uint64_t packets = 0;        // how many packets it is cut into
    double cap = 0;           // Transfer::max_rate: its packets leave at most this fast (0: any)
    // The sender's (its count of what it has cut, unsent and cut, is in Routes).
    uint64_t high = 0;        // lossy: the most it has cut (below: a packet cut again)
    uint32_t generation = 0;  // bumped at the acknowledgement, so a late ACK finds it gone
    // CNPs that have come back, and once the acknowledgement is in, how many it said were sent:
    // a CNP packet reads the transfer's route, so the slot is freed only when the last is back.
    uint32_t cnps_back = 0;
    uint32_t cnps_awaited = UINT32_MAX;
    // Read at start and completion (immutable).
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    // Told once its last packet is cut (Transfer::drained), then null.
    sim::EventHandler* drained = nullptr;
    uint64_t drained_payload = 0;
    Time back;                // the reverse route's latency: a CNP's or the acknowledgement's trip
    // The sender's, with DCQCN or DCTCP.
    ReactionPoint rp;
    Window window;
    // The lossy sender's: its size, the packets the receiver has confirmed (a NAK says all below
    // it arrived), when its retransmission timer fires, and whether the completion has reached it
    // (its record is then kept, so late packets find it).
    // Going back to the same packet again, it first waits a backoff that doubles each time, from a
    // round trip, so that its own packets of the round before have left the buffers it overflowed.
    int64_t total = 0;
    uint64_t acked = 0;
    uint64_t went_back_to = UINT64_MAX;
    Time backoff;
    Time rto_at = Time::max();
    bool finished = false;
    // The receiver's.
    uint64_t received = 0;    // packets arrived (counted when the routes end on several links)
    Time last_cnp_sent = Time::max();  // when it last sent a CNP
    uint32_t cnps_sent = 0;   // CNPs it sent: the acknowledgement carries the count
    // Lossy: received is the next packet it takes in order; the last arrival's index, and
    // whether a NAK is out for this round of the sender's.
    uint64_t last_seq = 0;
    bool nak_pending = false;
  };
  // A port's input slots with packets, in round-robin order: the front is served next. A ring
  // over as many entries as the port has input slots, each slot in it at most once; serving the
  // front and putting it back at the end (the usual turn) moves no entry.
  class ReadyRing {
   public:
    void reserve(size_t slots) {
      entries_.resize(slots);
      capacity_ = slots;
    }
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    uint32_t operator[](size_t k) const { return entries_[wrap(head_ + k)]; }
    void push_back(uint32_t slot) { entries_[wrap(head_ + count_++)] = slot; }
    // Removes the k-th entry; those after it move up one.
    void erase(size_t k) {
      if (k == 0) {
        head_ = wrap(head_ + 1);
      } else {
        for (size_t i = k; i + 1 < count_; ++i) entries_[wrap(head_ + i)] = entries_[wrap(head_ + i + 1)];
      }
      --count_;
    }

   private:
    size_t wrap(size_t i) const { return i < capacity_ ? i : i - capacity_; }
    std::vector<uint32_t> entries_;
    size_t capacity_ = 0;  // entries_.size(), kept beside it for the index arithmetic
    size_t head_ = 0;
    size_t count_ = 0;
  };
  // A FIFO of packets that entered a device over one link and leave over one port.
  struct InputQueue {
    uint32_t head = kNone;
    uint32_t tail = kNone;
  };
  static constexpr uint32_t kRoundMax = 16;  // PacketModelOptions::round
  // What settle_round needs of a round's packet, sent and gone from its FIFO: its bytes, and in
  // the top bit whether it took credits on the port's link (not its route's last); one word, so
  // that serve_round writes it in one store.
  struct RoundMember {
    static constexpr uint32_t kCredited = uint32_t{1} << 31;
    uint32_t word = 0;
    uint32_t bytes() const { return word & ~kCredited; }
    bool credited() const { return (word & kCredited) != 0; }
  };
  struct Port {
    Bandwidth bandwidth;
    Time latency;
    Time mtu_time;       // serialization time of a full packet
    // The credits this port's link may have in use: buffer_per_port, or into a shared switch
    // buffer the first grant (an mtu), which grants from that switch's pool raise.
    int64_t credit_limit = 0;
    sim::Site site = 0;  // its device, from(l)
    sim::Site far = 0;   // the device at its link's far end, to(l)
    // Credits in use on this port's link: bytes sent towards the receive buffer at its far end
    // and not yet returned. At most buffer_per_port.
    int64_t credits_used = 0;
    int64_t queued = 0;     // bytes that have arrived at this port and wait to be sent
    bool busy = false;
    // The most packets in one of its rounds (PacketModelOptions::round; 1: it serves none): as
    // many as its device allows (constructor), on the only link from its device to the far one:
    // with parallel links, packets of two ports arrive at one instant from one device in the
    // order their arrivals were queued, which a round's, queued as it is cut, would change.
    uint8_t round_most = 1;
    uint32_t on_wire = kNone;  // the packet being serialized
    // Sent at start (eager_): the serializer is busy until free_at, and a finish event is queued
    // for that instant only while a packet waits to be sent after it.
    Time free_at = Time::zero();
    bool finish_pending = false;
    uint32_t finish_gen = 0;  // a finish event of an older generation was taken back with its burst
    // The finish event's key, taken as the packet starts: queued later, the event sorts among
    // those of its instant where it would have, had it been queued then (Engine::take_key).
    uint64_t finish_key = 0;
    // A burst (bursting_): packets cut ahead, in the port's turn over its transfers, one mtu_time
    // apart from burst_from, that had not started as of the last event here: their credits are
    // not yet in credits_used, and an event that changes what the port would send takes them back
    // (take_back). Their arrival events carry tags burst_tag, burst_tag + 1, ...
    uint32_t burst_pending = 0;
    uint32_t burst_first = 0;  // the index in `injecting` of the burst's first packet's transfer
    uint32_t burst_count = 0;  // its packets; packet i is injecting[(burst_first + i) % size]'s
    Time burst_from;
    uint16_t tag = 0;        // the tag of the next packet this port sends (bursting_)
    uint16_t burst_tag = 0;
    // Packets taken back are still on their way as events until this instant: no burst before.
    Time burst_after = Time::zero();
    // A round's packets, all sent (their arrivals queued, each out of its FIFO): the last
    // round_pending had not started as of the last event here. They start back to back from
    // round_next, their inputs the ring's first (an input whose FIFO has emptied stays there until
    // its packet starts), their bytes still in `queued` and their credits not yet in credits_used
    // (members[round_pending - 1]: the next to start).
    uint32_t round_pending = 0;
    Time round_next;
    std::array<RoundMember, kRoundMax> members;  // in the port, beside the round's other fields
    // Input slots, created on first use: one per link into this port's device (by
    // in_index_), then the local injection slot (transfers that start here).
    std::vector<InputQueue> inputs;
    std::vector<uint32_t> injecting;  // transfers injecting here, served round robin
    size_t inject_next = 0;
    uint32_t capped = 0;              // of those, transfers with a cap
    Time wake_at = Time::max();       // a wake-up is pending for a paced sender
    ReadyRing ready;
    int64_t bytes_sent = 0;
    uint64_t marked = 0;  // DCQCN: packets it marked ECN
    bool paused = false;  // PFC: a PAUSE has arrived and its RESUME not yet
    Time paused_since;
    // PortStats: the most bytes queued, PAUSE frames taken, time paused (resumed pauses).
    int64_t peak_queued = 0;
    uint64_t pause_frames = 0;
    int64_t paused_ps = 0;
    // Sampling: the next tick (a multiple of sample_interval) not yet sampled, the samples where
    // the value changed, and the pauses (the last one open while paused).
    int64_t next_tick = 0;
    std::vector<QueueSample> samples;
    std::vector<PauseSpan> pauses;
  };
  // PFC: the receive buffer at link l's far end, kept by device to(l).
  struct IngressQueue {
    int64_t bytes = 0;     // arrived over l, not yet sent on (the packet on the next serializer too)
    int64_t xoff = 0;      // a PAUSE goes out when bytes rise above this
    int64_t xon = 0;       // and a RESUME when they fall to this
    Time back;             // a pause frame's trip to l's port: the reverse latency and its serialization
    bool pausing = false;  // a PAUSE went out and no RESUME since
    int64_t peak = 0;      // the most bytes it held
    uint64_t drops = 0;    // lossy: packets that found it full
  };
  // Credits sent back in batches (credit_batch), kept by link l's far end, to(l): the credits of
  // packets it has freed and not yet returned, the latest time one of them was freed, and what
  // the last packet to arrive over l said l's port had in use (its credits_used once it had
  // taken that packet's, rounded up). The port's use grows only by what it sends, so from that
  // figure the far end bounds it until its next packet can arrive and the credits, if returned
  // then, reach the port: credits stay back only while that bound (defer_below) leaves the port
  // room for a packet, so the port never tries a packet that a per-packet return would have let
  // through (docs/packet-model.md, Speed).
  // A round's packets enter the batch as it is cut, freed up to a round's serializations later,
  // which defer_below leaves room for (the constructor caps rounds so that it costs at most
  // 1 / kRoundShare of that room).
  static constexpr int64_t kRoundShare = 8;
  struct CreditReturn {
    int64_t deferred = 0;
    Time freed_by = Time::zero();
    int64_t port_used = 0;
    int64_t defer_below = -1;  // credits stay back while port_used is at most this
  };
  // Tags of packets taken back from a burst on link l, kept by l's far end, to(l): their arrivals
  // are dropped; `left` of them are still to come.
  struct TakenBack {
    uint16_t first = 0;
    uint16_t count = 0;
    uint16_t left = 0;
  };
  // A network switch's shared buffer, kept by the switch (to(l) of every link l into it).
  struct SharedPool {
    int64_t capacity = 0;  // shared_buffer
    int64_t size = 0;      // what the threshold divides: the capacity less PFC's headroom
    int64_t used = 0;      // what its links hold together
    int64_t peak = 0;
    // Credits: links whose last grant found no room, tried again whenever the pool frees bytes.
    std::vector<uint32_t> starved;
  };
  // What one partition's events write besides its devices' ports: its packets and the slots of
  // the transfers its GPUs send, and its share of the counters. Transfers and packets are counted
  // where they start and where they end, so the differences hold only summed over shards.
  struct Shard {
    std::vector<Packet> packets;
    uint32_t free_packets = kNone;  // the first free packet; the others follow by Packet::next
    // Transfers' records and their routes, taken and given back together (one slot id).
    sim::StablePool<TransferState> transfers;
    sim::StablePool<Routes> routes;
    MiddleStore middles;
    topology::RouteSet route;  // start's routes, routed in place
    uint64_t started = 0;    // transfers started here
    uint64_t completed = 0;  // transfers that completed at a receiver here
    uint64_t injected = 0;   // packets cut here
    uint64_t landed = 0;     // packets delivered here
    int64_t delivered = 0;   // bytes
    int64_t peak_occupancy = 0;
    int64_t peak_queued = 0;
    uint64_t packets_sent = 0;
    uint64_t ecn_marks = 0;
    uint64_t cnps = 0;
    uint64_t pause_frames = 0;  // sent by this partition's ingress queues
    int64_t paused_ps = 0;      // this partition's ports' time paused
    int64_t peak_ingress = 0;
    uint64_t drops = 0;
    uint64_t naks = 0;
    uint64_t timeouts = 0;
    uint64_t retransmitted = 0;
    uint64_t window_cuts = 0;
    uint64_t taken_back = 0;  // bursts
  };

  // Event kinds, in the payload's top bits: a port finishing a packet (the port; eager_: its
  // serializer coming free with a packet waiting), a packet
  // arriving over a link (its fields, below), a port's paced sender becoming ready (the port), a
  // CNP packet arriving over a link (its fields), the acknowledgement reaching its sender (the
  // transfer; the CNPs its receiver sent in aux), credits reaching
  // a link's port (the link; the bytes in aux), a PAUSE or RESUME reaching a link's port (the
  // link), a NAK reaching its sender (seq << 32 | transfer), a sender's retransmission timer (the
  // transfer), a DCTCP ACK reaching its sender (generation << 32 | transfer; the bytes in aux, the
  // echoed mark in its top bit), packets taken back from a burst reaching a link's far end (the
  // link; their first tag and count in aux). A finish carries its port's finish_gen above the port.
  static constexpr int kKindShift = 60;
  enum Kind : uint64_t {
    kFinish = 0, kArrive = 1, kWake = 2, kCnpArrive = 3, kAck = 4, kCredit = 5, kPause = 6, kResume = 7,
    kNak = 8, kRto = 9, kWindowAck = 10, kTakeBack = 11
  };
  static constexpr uint32_t kEce = uint32_t{1} << 31;
  static constexpr uint64_t kFieldMask = (uint64_t{1} << kKindShift) - 1;
  static constexpr uint32_t kGenerationMask = (uint32_t{1} << 28) - 1;
  static uint64_t event(Kind kind, uint64_t fields) { return (uint64_t{kind} << kKindShift) | fields; }
  // An arriving packet's fields: transfer (32 bits), hop (8), route (8), marked, completes, and
  // when lossy its seq's low 10 bits; its bytes ride in the event's aux word, lossy in its low 21
  // bits with the seq's high 11 above them.
  static constexpr int kSeqLowBits = 10;
  // Credits (eager_): the port's credits in use as it sent the packet, in units of 2^stamp_shift_,
  // in the bits the lossy seq takes otherwise.
  static constexpr int kStampShift = 50;
  static constexpr uint64_t kStampMax = (uint64_t{1} << kSeqLowBits) - 1;
  static constexpr int kAuxBytesBits = 21;
  static constexpr uint64_t kMaxLossyPackets = uint64_t{1} << (kSeqLowBits + 32 - kAuxBytesBits);
  [[gnu::always_inline]] uint64_t encode(const Packet& p, uint64_t stamp = 0) const;
  [[gnu::always_inline]] uint64_t stamp(int64_t credits_used) const;
  [[gnu::always_inline]] uint32_t aux_of(const Packet& p) const;
  [[gnu::always_inline]] Packet decode(uint64_t fields, uint32_t aux) const;
  // Single fields of an arrival (decode): its transfer, hop and route, and its bytes from the aux word.
  static uint32_t transfer_of(uint64_t fields) { return static_cast<uint32_t>(fields); }
  static uint8_t hop_of(uint64_t fields) { return static_cast<uint8_t>(fields >> 32); }
  static uint8_t route_of(uint64_t fields) { return static_cast<uint8_t>(fields >> 40); }
  [[gnu::always_inline]] uint32_t bytes_of(uint32_t aux) const;
  uint64_t stamp_of(uint64_t fields) const {
    return credit_back_.empty() ? 0 : (fields >> kStampShift) & kStampMax;
  }

  void on_event(sim::Engine& engine, uint64_t payload) override;
  // A port's finish and a credit update, each on_event's tail call: kept out of it, so that an
  // arrival's dispatch saves no register.
  [[gnu::noinline]] void on_finish(sim::Engine& engine, uint32_t port, uint64_t fields);
  [[gnu::noinline]] void on_credit(sim::Engine& engine, uint32_t port);
  // The kinds on_event does not take itself (all but a packet hop's).
  void on_rare_event(sim::Engine& engine, uint64_t payload);
  Shard& shard(const sim::Engine& engine) {
    const uint32_t p = engine.partition();
    if (p >= shards_.size()) [[unlikely]] wrong_partition(p);
    return shards_[p];
  }
  [[noreturn]] void wrong_partition(uint32_t partition) const;
  // The packet pool: a free packet (or a new one), and a packet given back.
  static uint32_t take_packet(Shard& sh) {
    if (sh.free_packets == kNone) {
      sh.packets.emplace_back();
      return static_cast<uint32_t>(sh.packets.size() - 1);
    }
    const uint32_t id = sh.free_packets;
    sh.free_packets = sh.packets[id].next;
    return id;
  }
  static void free_packet(Shard& sh, uint32_t packet) {
    sh.packets[packet].next = sh.free_packets;
    sh.free_packets = packet;
  }
  TransferState& transfer(uint32_t id) { return shards_[id >> kSlotBits].transfers[id & kSlotMask]; }
  Routes& routes_of(uint32_t id) { return shards_[id >> kSlotBits].routes[id & kSlotMask]; }
  // The link that route `r` of transfer `id` takes at hop `h`, and how many links that route has.
  topology::LinkId link_at(const Routes& rt, uint32_t id, size_t r, size_t h) {
    if (rt.hops == 0) [[unlikely]] return transfer(id).paths[r][h];
    if (h < rt.head) return rt.edge[h];
    if (h < size_t{rt.head} + rt.mid) return rt.middle[r * rt.mid + h - rt.head];
    return rt.edge[h - rt.mid];
  }
  size_t route_length(const Routes& rt, uint32_t id, size_t r) {
    return rt.hops != 0 ? rt.hops : transfer(id).paths[r].size();
  }
  // The link every route of transfer `id` starts on: its sender's injection port.
  topology::LinkId first_link(uint32_t id) { return link_at(routes_of(id), id, 0, 0); }
  // Sets `rt` from the transfer's routes, its middles interned in `store`.
  static void set_routes(Routes& rt, MiddleStore& store, const topology::RouteSet& paths);
  static const topology::LinkId* intern(MiddleStore& store, std::span<const topology::LinkId> links);
  void finish_transmit(sim::Engine& engine, uint32_t port);
  // Sends a packet that `link`'s port has serialized over the link: its arrival is an event at
  // the link's far end, a latency later.
  // With eager_ the port sends it as it starts it: `left` is when its last byte is out, and
  // `stamp` the port's credits in use then (stamp()).
  // Here and below, `pk` is the packet and `packet` its index in the shard's pool, or kNone for
  // one that never waited in the pool (cut or arrived, and sent at once); depart frees it.
  [[gnu::always_inline]] void depart(sim::Engine& engine, Shard& sh, uint32_t link, Packet& pk, uint32_t packet,
                                     Time left, uint64_t stamp);
  // eager_: a port starting a packet sends it at once (depart) and frees the credits of the link it
  // came over as its serialization ends; finish events come only while packets wait behind it.
  [[gnu::always_inline]] void send_now(sim::Engine& engine, Shard& sh, uint32_t port, Packet& pk, uint32_t packet,
                                       Time serialize);
  // `port` starts serializing the packet (taking credits if `credited`), chosen by try_send or
  // forward.
  [[gnu::always_inline]] void begin(sim::Engine& engine, Shard& sh, uint32_t port, Packet& pk, uint32_t packet,
                                    bool credited);
  [[gnu::always_inline]] void ensure_finish(sim::Engine& engine, uint32_t port);
  [[gnu::noinline]] void queue_finish(sim::Engine& engine, uint32_t port);  // ensure_finish's event
  // Bursts (bursting_): how many full packets the port may cut at once, in its turn from
  // injecting[chosen], the first included (0: no burst); cutting them, `first` already cut;
  // counting the credits of those that have started as of the event being executed; and taking
  // back those that have not.
  uint32_t burst_size(const sim::Engine& engine, const Port& p, uint32_t port, uint32_t chosen);
  // Bursts and rounds: the bytes of packets `port` may send ahead as of now, each with its credits
  // now, and with credit batches each one's stamp (its credits in use as if none came back before
  // it starts) no more than the far end's defer_below.
  [[gnu::always_inline]] int64_t room_ahead(const Port& p, uint32_t port) const;
  void send_burst(sim::Engine& engine, Shard& sh, uint32_t port, Packet& first, uint32_t chosen, uint32_t n);
  [[gnu::always_inline]] void settle_burst(const sim::Engine& engine, Shard& sh, Port& p);
  void take_back(sim::Engine& engine, Shard& sh, uint32_t port);
  // Rounds (Port::round_most): how many of the ring's first inputs `port` may serve at once (below 2:
  // no round); serving them; and settling those that have started as of the event being executed,
  // as a finish per packet would have started them (each input leaves the ring's front, and goes
  // back at its end while its FIFO holds packets, its bytes leave the queue, its credits are
  // taken), before that event changes the port.
  [[gnu::always_inline]] uint32_t round_size(const Shard& sh, const Port& p, uint32_t port) const;
  void serve_round(sim::Engine& engine, Shard& sh, uint32_t port, uint32_t n);
  [[gnu::always_inline]] void settle_round(const sim::Engine& engine, Shard& sh, uint32_t port);
  // The far end of `link` drops an arrival tagged `tag` that was taken back.
  [[gnu::always_inline]] bool taken_back(uint32_t link, uint32_t tag);
  // bursting_: the tag of the next packet `link`'s port sends, in an arrival's aux word above its
  // bytes.
  uint32_t next_tag(uint32_t link) { return bursting_ ? uint32_t{ports_[link].tag++} << 16 : 0; }
  // A packet arrives: its arrival event's fields (encode), its bytes in the event's aux word.
  void arrive(sim::Engine& engine, uint64_t fields);
  // A CNP packet arrives: at a switch it queues for the next link back, at the sender it is taken.
  void arrive_cnp(sim::Engine& engine, const Packet& arrived, uint64_t stamp);
  // A packet `pk` that arrived over `over` joins this device, queued for `port` (its bytes counted
  // there and, PFC and lossy, in the ingress queue); false when lossy drops it. forward() sends it
  // at once if `port` is idle with nothing queued, else puts it in port's FIFO for `over` and tries
  // the port.
  [[gnu::always_inline]] bool take_in(sim::Engine& engine, Shard& sh, const Packet& pk, uint32_t over, uint32_t port,
                                      uint64_t stamp);
  [[gnu::always_inline]] void forward(sim::Engine& engine, Shard& sh, uint32_t port, uint32_t over, Packet& pk);
  // passing_ (the common hop at a leaf): a full packet of `ts` that arrived over `over`, bound for
  // `port`, its route's last link, leaves at once when the port is idle with nothing queued and
  // the packet is not the transfer's last to leave there, as take_in and forward would send it,
  // counted delivered (depart) with no event. False, having changed nothing, otherwise.
  [[gnu::always_inline]] bool pass_last(sim::Engine& engine, Shard& sh, Routes& rt, uint32_t bytes,
                                        uint32_t over, uint32_t port, uint64_t stamp);
  // The far end of `over` notes the credits its port had in use when it sent the packet just
  // arrived (`stamp`), sending held-back credits now if that port may come near its limit.
  [[gnu::always_inline]] void note_stamp(sim::Engine& engine, uint32_t over, uint64_t stamp);
  // The link a packet is on at its hop.
  uint32_t link_of(const Packet& p);
  // The sender's slot is free: its acknowledgement and every CNP it was sent are in.
  void release(uint32_t transfer);
  // Starts serializing the next packet on `port` if it is idle and some input's head packet has
  // the credits it needs; otherwise a credit's arrival (or a paced sender's wake-up) tries again.
  void try_send(sim::Engine& engine, uint32_t port);
  [[gnu::noinline]] void send_next(sim::Engine& engine, uint32_t port);  // try_send past its gates
  // Sends `bytes` of credits, freed at `freed`, back to `link`'s port over the reverse link; they
  // arrive its latency later. With credit batches they may stay back (CreditReturn), and
  // flush_credits sends all that did, to arrive its latency after the last was freed or after
  // now, whichever is later.
  [[gnu::always_inline]] void return_credits(sim::Engine& engine, uint32_t link, int64_t bytes, Time freed);
  void flush_credits(sim::Engine& engine, uint32_t link);
  // PFC: a packet of `bytes` joins or leaves link's ingress queue; crossing Xoff sends a PAUSE,
  // falling to Xon after one a RESUME, each an event at the link's port a frame's trip later.
  void fill_ingress(sim::Engine& engine, Shard& sh, uint32_t link, int64_t bytes);
  void drain_ingress(sim::Engine& engine, uint32_t link, int64_t bytes);
  // Shared switch buffers: the dynamic threshold of `pool` now; credits: `link` frees `bytes` of
  // its switch's pool, which grants it (and links starved before) what the threshold allows, each
  // grant a credit update to the link's port; grant() is one link's, returning whether it got any.
  double threshold(const SharedPool& pool) const;
  void release_shared(sim::Engine& engine, uint32_t link, int64_t bytes);
  bool grant(sim::Engine& engine, uint32_t link);
  void fill_pool(SharedPool& pool, int64_t bytes);
  // Lossy: whether link's ingress buffer takes a packet of `bytes`.
  bool admits(uint32_t link, int64_t bytes) const;
  // Lossy: the receiver takes a packet in order or discards it, NAKing a gap once per round.
  void receive_in_order(sim::Engine& engine, Shard& sh, const Packet& arrived);
  // Lossy: the sender cuts its packets from `seq` on (a NAK's: back to a lost one, or past those
  // it sent again that had arrived; or on a timeout, the last a NAK gave).
  void go_back(sim::Engine& engine, uint32_t transfer, uint64_t seq);
  [[gnu::always_inline]] void enqueue(Shard& sh, uint32_t port, uint32_t slot, uint32_t packet);
  // Sampling: `port`'s queue is about to change at `now`; the ticks before `now` not yet sampled
  // saw its bytes as they are.
  [[gnu::always_inline]] void sample_before(uint32_t port, Time now);
  // Its queue changes by `bytes` at `now`: sampled before, and its peak kept.
  [[gnu::always_inline]] void change_queue(Shard& sh, uint32_t port, Time now, int64_t bytes);
  // How long a capped transfer's sender takes to write its next packet's bytes at its cap.
  Time capped_write_time(const TransferState& ts, const Routes& rt) const;
  // How long `p` takes to serialize a packet of `bytes`.
  Time serialization(const Port& p, uint32_t bytes) const {
    return bytes == options_.mtu.count() ? p.mtu_time : p.bandwidth.transfer_time(Bytes(bytes));
  }
  uint32_t injection_slot(const Port& p) const;
  // Creates a port's input slots on their first use (make_inputs).
  void ensure_inputs(uint32_t port) {
    if (ports_[port].inputs.empty()) [[unlikely]] make_inputs(port);
  }
  void make_inputs(uint32_t port);
  // The next packet `rt`'s sender cuts (its bytes left to cut not yet reduced); `ts` is read only
  // when lossy.
  [[gnu::always_inline]] Packet new_packet(Shard& sh, TransferState& ts, Routes& rt, uint32_t transfer,
                                            uint32_t bytes);
  // DCQCN: the marking draw at a switch egress port, the receiver's CNP, the sender's reaction.
  bool mark(uint32_t port);
  void notify(sim::Engine& engine, Shard& sh, const Packet& marked);
  void take_cnp(Time now, ReactionPoint& rp);
  void catch_up(Time now, ReactionPoint& rp) const;
  void increase(ReactionPoint& rp) const;
  void pace(Time now, ReactionPoint& rp, uint32_t bytes);
  // DCTCP: the receiver's ACK of one packet, and the sender's window taking it.
  void acknowledge(sim::Engine& engine, const Packet& arrived);
  void take_ack(Shard& sh, Window& w, int64_t bytes, bool ece) const;
  // Index into p.injecting of the next transfer whose pacing and DCTCP window let it send at
  // `now`, from inject_next round robin; kNone when none, with the earliest ready time in
  // `ready_at` (a full window waits for an ACK, not a time).
  uint32_t next_injector(const Port& p, Time now, Time& ready_at);
  // A counter over the shards: their sum, or the largest of their peaks.
  template <class F>
  uint64_t sum(F f) const {
    uint64_t total = 0;
    for (const Shard& s : shards_) total += static_cast<uint64_t>(f(s));
    return total;
  }
  template <class F>
  int64_t peak(F f) const {
    int64_t most = 0;
    for (const Shard& s : shards_) most = std::max(most, f(s));
    return most;
  }

  const topology::Cluster& cluster_;
  PacketModelOptions options_;
  std::vector<Port> ports_;             // one per directed link, by LinkId
  std::vector<IngressQueue> ingress_;   // PFC: one per directed link, by LinkId
  // Credits with dedicated buffers: ports send packets as they start them (Port::free_at), and
  // credits may come back in batches (credit_back_, per link; empty without batches).
  bool eager_ = false;
  // DCQCN, DCTCP or lossy: a port's senders may have to wait (next_injector), as capped ones do.
  bool paced_ = false;
  // Credits with dedicated buffers, no pacing, burst > 1 and an mtu below 64 KiB (its bytes and
  // a tag share an arrival's aux word): GPU ports send in bursts (PacketModelOptions::burst).
  bool bursting_ = false;
  // Credits with dedicated buffers, no pacing and options_.pass_last: arrive() passes a packet
  // onto an idle last link in one step (pass_last).
  bool passing_ = false;
  bool marking_ = false;  // DCQCN or DCTCP: ports may mark packets ECN (marks_)
  std::vector<TakenBack> taken_back_;  // per link (bursting_)
  std::vector<CreditReturn> credit_back_;
  int stamp_shift_ = 0;  // a stamp's unit is 2^stamp_shift_ bytes
  std::vector<uint32_t> in_index_;      // link -> its index among the links into its `to` device
  std::vector<uint32_t> in_degree_;     // device -> links into it
  std::vector<Shard> shards_;           // one per partition
  // Shared switch buffers: per link, its far switch's pool (kNone: a dedicated buffer); the
  // pools; credits: per link, the bytes granted and not yet freed, and whether it is starved.
  std::vector<uint32_t> pool_of_;
  std::vector<SharedPool> pools_;
  std::vector<int64_t> held_;
  std::vector<uint8_t> starved_;
  std::vector<uint8_t> marks_;  // per port: a network switch's egress, where DCQCN marks
  std::vector<sim::Rng> rngs_;  // per port: its marking draws, a stream of (seed, port)
};

}  // namespace dtsim::network
