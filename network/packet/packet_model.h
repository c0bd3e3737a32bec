// PacketNetworkModel: the packet-level NetworkModel. A transfer is cut into packets of at most
// `mtu` bytes that travel its routed path (cluster.route(src, dst, flow_hash)), or with adaptive
// routing its sprayed routes in turn, packet j on route j mod K (transfer_paths); every directed
// link is an output port serializing one packet at a time at the link's bandwidth,
// store-and-forward, and the packet reaches the next device a link latency later. The fabric is
// lossless with link-level credits, as InfiniBand's: each link has a receive buffer at its far
// end, its port sends a packet only with credits for the packet's bytes, and the credits come
// back over the reverse link, a latency after the packet has left that buffer. An output port
// serves its input ports round robin. A transfer completes when its last packet arrives. Pick it
// with `--model packet`.
// With DCQCN on (RoCE), switch egress ports mark packets ECN by their queue, the receiving NIC
// returns congestion notifications, and each transfer's sender paces its packets at a rate that
// falls on a notification and recovers without one (DcqcnOptions).
//   network::PacketNetworkModel net(cluster, {.mtu = Bytes(4096), .buffer_per_port = Bytes::mib(32)});
//   net.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
//
// Who owns what: every piece of mutable state belongs to one device, the one where the events
// that touch it run, so that a partitioned engine can give each device's state to one thread and
// let only events that travel a link (with its latency) cross between them.
//  - Port l (device from(l)): its input FIFOs, round robin, injection list, pacing wake-up, the
//    packet on its serializer, its credits in use (credits_used), its queued bytes and ECN RNG
//    stream (DCQCN marks at a switch egress), bytes_sent.
//  - Wire of link l (packets, towards to(l)) and credit wire of link l (credits, back towards
//    from(l) over l ^ 1): messages in flight. The sending device appends, the receiving device's
//    arrival event pops the head; the head's event is the only one queued.
//  - A transfer's sender (the source GPU): unsent, cut, its ReactionPoint (pacing, DCQCN rate).
//  - A transfer's last link's port (from(last link)): left_last, the packets that left on it.
//  - A transfer's receiver (the destination GPU): received, last_cnp_sent (the CNP rate limit).
//  - Immutable from start to completion, read anywhere as a packet header would carry it: paths,
//    one_last_link, packets (the count), cap, done and payload.
//  - Packets travel as messages: a packet's fields are written only by the device that holds it.
// Model-global for now (a partitioned model will split them per partition): the packet, credit
// and transfer slot pools, with a transfer slot's generation (bumped by the receiver at
// completion, compared by the sender when a CNP arrives: the one cross-device read left, which
// goes with the pool), and the counters (delivered_, peaks, packets_sent_, ecn_marks_, cnps_,
// active_, started_).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "network/network_model.h"
#include "network/packet/dcqcn.h"
#include "sim/rng.h"
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
};

class PacketNetworkModel final : public NetworkModel, private sim::EventHandler {
 public:
  // `cluster` must outlive the model. The model is the handler of its own events, so it neither
  // copies nor moves. Throws std::invalid_argument when mtu is not positive, a buffer cannot
  // hold one mtu, or the links do not come in pairs (l, l ^ 1) of the two directions.
  PacketNetworkModel(const topology::Cluster& cluster, PacketModelOptions options = {});
  PacketNetworkModel(const PacketNetworkModel&) = delete;
  PacketNetworkModel& operator=(const PacketNetworkModel&) = delete;

  std::string_view name() const override { return "packet"; }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
             uint64_t payload) override;
  // Bytes of every packet that has reached its destination GPU; a packet that neither completes
  // its transfer nor sends a CNP counts once it is on the last link there (it cannot be held).
  Bytes bytes_delivered() const override { return delivered_; }

  // Transfers started and not yet complete.
  size_t active_transfers() const { return active_; }
  // Packets injected and not yet delivered.
  size_t packets_in_flight() const { return packets_.size() - free_packets_.size(); }
  // Most credits any link has had in use: bytes sent on it towards its receive buffer and not yet
  // returned (on the wire, in that buffer, or as credits on their way back); never above
  // buffer_per_port.
  Bytes peak_buffer_occupancy() const { return Bytes(peak_occupancy_); }
  // Most bytes any output port has had waiting to be sent (arrived, not yet serialized), over
  // all its inputs: the queue that DCQCN marks by.
  Bytes peak_queue() const { return Bytes(peak_queued_); }
  // Bytes serialized onto `link` so far.
  Bytes bytes_sent_on(topology::LinkId link) const;
  uint64_t packets_sent() const { return packets_sent_; }
  NetworkCounters counters() const override {
    return {.transfers = started_, .solves = 0, .flows = 0, .packets = packets_sent_};
  }
  // DCQCN: packets marked ECN, and CNPs the senders took.
  uint64_t ecn_marks() const { return ecn_marks_; }
  // Packets marked ECN at one switch egress port.
  uint64_t ecn_marks_at(topology::LinkId port) const { return ports_.at(port).marked; }
  uint64_t cnps() const { return cnps_; }

  // Packet hops a transfer of `bytes` over `hops` links costs: roughly two engine events each.
  static uint64_t packet_hops(Bytes bytes, size_t hops, Bytes mtu);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Packet {
    uint32_t transfer = 0;
    uint32_t bytes = 0;
    uint32_t next = kNone;  // the next packet in the same input queue or on the same link
    uint16_t hop = 0;       // index into its route of the link it is on or queued for
    uint16_t route = 0;     // which of the transfer's routes it takes
    bool marked = false;    // ECN congestion experienced
    bool completes = false; // the last of its transfer to leave on the transfer's one last link
    // On a link: when it reaches the link's end, and the engine key its arrival sorts by.
    Time arrive_at;
    uint64_t key = 0;
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
  // One transfer's state, by the device that owns each part (top of this file).
  struct TransferState {
    // Immutable from start to completion.
    std::vector<std::vector<topology::LinkId>> paths;  // one, or the sprayed routes
    uint64_t packets = 0;        // how many packets it is cut into
    bool one_last_link = true;   // every route ends on the same link
    sim::EventHandler* done = nullptr;
    uint64_t payload = 0;
    uint32_t generation = 0;  // bumped on completion, so a late CNP finds its transfer gone
    double cap = 0;           // Transfer::max_rate: its packets leave at most this fast (0: any)
    // The sender's.
    int64_t unsent = 0;       // bytes not yet cut into packets
    uint64_t cut = 0;         // packets cut so far: the next takes route cut mod paths
    ReactionPoint rp;
    // Its last link's port's (with one_last_link).
    uint64_t left_last = 0;   // packets that left on the last link
    // The receiver's.
    uint64_t received = 0;    // packets arrived (counted when the routes end on several links)
    Time last_cnp_sent = Time::max();  // when it last sent a CNP
  };
  // A FIFO of packets: those that entered a device over one link and leave over this port, or
  // those on a link's wire.
  struct InputQueue {
    uint32_t head = kNone;
    uint32_t tail = kNone;
  };
  struct Port {
    Bandwidth bandwidth;
    Time latency;
    Time mtu_time;       // serialization time of a full packet
    // Credits in use on this port's link: bytes sent towards the receive buffer at its far end
    // and not yet returned. At most buffer_per_port.
    int64_t credits_used = 0;
    int64_t queued = 0;     // bytes that have arrived at this port and wait to be sent
    bool busy = false;
    uint32_t on_wire = kNone;  // the packet being serialized
    // Input slots, created on first use: one per link into this port's device (by
    // in_index_), then the local injection slot (transfers that start here).
    std::vector<InputQueue> inputs;
    std::vector<uint32_t> injecting;  // transfers injecting here, served round robin
    size_t inject_next = 0;
    uint32_t capped = 0;              // of those, transfers with a cap
    Time wake_at = Time::max();       // a wake-up is pending for a paced sender
    // Input slots with packets, in round-robin order: the front is served next.
    std::deque<uint32_t> ready;
    int64_t bytes_sent = 0;
    uint64_t marked = 0;  // DCQCN: packets it marked ECN
  };
  // Credits on their way back to a link's port over the reverse link, in a FIFO per link.
  struct Credit {
    Time arrive_at;
    uint64_t key = 0;  // the engine key of the moment they were sent
    int64_t bytes = 0;
    uint32_t next = kNone;
  };

  // Event payloads: a port finishing a packet (the port), the head packet of a link's wire
  // arriving at the link's end (the link), a port's paced sender becoming ready, a CNP reaching
  // its sender (generation << 32 | transfer), or the head of a link's credit wire reaching the
  // link's port (the link).
  static constexpr uint64_t kArrive = uint64_t{1} << 63;
  static constexpr uint64_t kWake = uint64_t{1} << 62;
  static constexpr uint64_t kCnp = uint64_t{1} << 61;
  static constexpr uint64_t kCredit = uint64_t{1} << 60;
  static constexpr uint64_t kKinds = kArrive | kWake | kCnp | kCredit;
  static constexpr uint32_t kGenerationMask = (uint32_t{1} << 28) - 1;
  void on_event(sim::Engine& engine, uint64_t payload) override;
  void finish_transmit(sim::Engine& engine, uint32_t port);
  // Puts a packet that `link`'s port has serialized on the link's wire. A link's latency is
  // constant and its port sends one packet at a time, so its packets arrive in the order they
  // left: only the head's arrival is an engine event, and it queues the next head's.
  void depart(sim::Engine& engine, uint32_t link, uint32_t packet);
  void arrive_head(sim::Engine& engine, uint32_t link);
  void arrive(sim::Engine& engine, uint32_t packet);
  // A packet that reached its destination GPU, or is on its way there and waited on by nothing.
  void count_delivered(uint32_t packet);
  // Starts serializing the next packet on `port` if it is idle and some input's head packet has
  // the credits it needs; otherwise a credit's arrival (or a paced sender's wake-up) tries again.
  void try_send(sim::Engine& engine, uint32_t port);
  // Sends `bytes` of credits back to `link`'s port over the reverse link; they arrive its
  // latency later. Only the head of a link's credit FIFO is an engine event, as on the wire.
  void return_credits(sim::Engine& engine, uint32_t link, int64_t bytes);
  void credits_arrive(sim::Engine& engine, uint32_t link);
  // A link's FIFO of what is in flight on it (packets, or credits going back), in the order sent.
  // The latency is constant, so they arrive in that order: only the head's arrival (at its
  // arrive_at, with the engine key of the moment it was sent) is a queued event, with `payload`.
  template <class Item>
  void wire_push(sim::Engine& engine, InputQueue& wire, std::vector<Item>& items, uint32_t id,
                 uint64_t payload);
  template <class Item>
  uint32_t wire_pop(sim::Engine& engine, InputQueue& wire, std::vector<Item>& items,
                    uint64_t payload);
  void enqueue(uint32_t port, uint32_t slot, uint32_t packet);
  // How long a capped transfer's sender takes to write its next packet's bytes at its cap.
  Time capped_write_time(const TransferState& ts) const;
  uint32_t injection_slot(const Port& p) const;
  void ensure_inputs(uint32_t port);
  uint32_t new_packet(uint32_t transfer, uint32_t bytes);
  // The port after hop `hop` of the packet's path, or kNone at the last hop.
  uint32_t next_port(const Packet& p) const;
  // DCQCN: the marking draw at a switch egress port, the receiver's CNP, the sender's reaction.
  bool mark(uint32_t port);
  void notify(sim::Engine& engine, uint32_t transfer, const std::vector<topology::LinkId>& path);
  void take_cnp(Time now, ReactionPoint& rp);
  void catch_up(Time now, ReactionPoint& rp) const;
  void increase(ReactionPoint& rp) const;
  void pace(Time now, ReactionPoint& rp, uint32_t bytes);
  // Index into p.injecting of the next transfer whose pacing lets it send at `now`, from
  // inject_next round robin; kNone when none, with the earliest ready time in `ready_at`.
  uint32_t next_injector(const Port& p, Time now, Time& ready_at);

  const topology::Cluster& cluster_;
  PacketModelOptions options_;
  std::vector<Port> ports_;             // one per directed link, by LinkId
  std::vector<InputQueue> wires_;       // per link: its packets in flight, in departure order
  std::vector<InputQueue> credit_wires_;  // per link: credits on their way back to its port
  std::vector<uint32_t> in_index_;      // link -> its index among the links into its `to` device
  std::vector<uint32_t> in_degree_;     // device -> links into it
  std::vector<Packet> packets_;
  std::vector<uint32_t> free_packets_;
  std::vector<TransferState> transfers_;
  std::vector<uint32_t> free_transfers_;
  std::vector<Credit> credits_;
  std::vector<uint32_t> free_credits_;
  size_t active_ = 0;
  Bytes delivered_;
  int64_t peak_occupancy_ = 0;
  int64_t peak_queued_ = 0;
  uint64_t packets_sent_ = 0;
  uint64_t started_ = 0;  // transfers started
  std::vector<uint8_t> marks_;  // per port: a network switch's egress, where DCQCN marks
  std::vector<sim::Rng> rngs_;  // per port: its marking draws, a stream of (seed, port)
  uint64_t ecn_marks_ = 0;
  uint64_t cnps_ = 0;
};

}  // namespace dtsim::network
