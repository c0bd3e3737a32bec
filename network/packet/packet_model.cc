#include "network/packet/packet_model.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "network/free_list.h"

namespace dtsim::network {

PacketNetworkModel::PacketNetworkModel(const topology::Cluster& cluster, PacketModelOptions options)
    : cluster_(cluster), options_(options) {
  if (options_.mtu.count() <= 0 || options_.mtu.count() > UINT32_MAX) {
    throw std::invalid_argument("packet model: mtu must be between 1 byte and 4 GiB");
  }
  if (options_.buffer_per_port < options_.mtu) {
    throw std::invalid_argument("packet model: buffer_per_port must hold at least one mtu");
  }
  const DcqcnOptions& d = options_.dcqcn;
  if (d.enabled && !(d.kmin.count() >= 0 && d.kmax > d.kmin && d.pmax > 0 && d.pmax <= 1 && d.g > 0 &&
                     d.g < 1 && d.alpha_period > Time::zero() && d.increase_period > Time::zero() &&
                     d.byte_counter.count() > 0 && d.min_rate.bytes_per_s() > 0)) {
    throw std::invalid_argument(
        "packet model: DCQCN needs 0 <= kmin < kmax, 0 < pmax <= 1, 0 < g < 1, positive periods, "
        "byte counter and minimum rate");
  }
  const auto links = cluster_.links();
  // Credits and CNPs travel back over the reverse link, l ^ 1 (topology/cluster.h).
  for (size_t l = 0; l < links.size(); ++l) {
    if ((l ^ 1) >= links.size() || links[l ^ 1].from != links[l].to || links[l ^ 1].to != links[l].from) {
      throw std::invalid_argument("packet model: links must come in pairs (l, l ^ 1), one per direction");
    }
  }
  ports_.resize(links.size());
  wires_.resize(links.size());
  credit_wires_.resize(links.size());
  marks_.resize(links.size());
  rngs_.reserve(links.size());
  in_index_.resize(links.size());
  in_degree_.assign(cluster_.devices().size(), 0);
  for (size_t l = 0; l < links.size(); ++l) {
    Port& p = ports_[l];
    p.bandwidth = Bandwidth::bytes_per_s(links[l].bandwidth.bytes_per_s() *
                                         options_.link_efficiency.of(links[l].kind));
    p.latency = links[l].latency;
    p.mtu_time = p.bandwidth.transfer_time(options_.mtu);
    in_index_[l] = in_degree_[links[l].to]++;
    marks_[l] = cluster_.device(links[l].from).kind == topology::DeviceKind::network_switch;
    // A stream per port, so that a port's marks depend on its own queue's history alone.
    rngs_.emplace_back(options_.dcqcn.seed, sim::stream_id("dcqcn-marking") + l);
  }
}

uint64_t PacketNetworkModel::packet_hops(Bytes bytes, size_t hops, Bytes mtu) {
  if (bytes.count() <= 0 || mtu.count() <= 0) return 0;
  const auto packets = static_cast<uint64_t>((bytes.count() + mtu.count() - 1) / mtu.count());
  return packets * hops;
}

Bytes PacketNetworkModel::bytes_sent_on(topology::LinkId link) const {
  return Bytes(ports_.at(link).bytes_sent);
}

void PacketNetworkModel::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                               uint64_t payload) {
  ++started_;
  std::vector<std::vector<topology::LinkId>> paths = transfer_paths(cluster_, t);
  if (paths.empty()) {  // to itself, or no bytes: only the route's latency (empty_message_latency)
    delivered_ += t.bytes;
    engine.schedule_in(empty_message_latency(cluster_, t), done, payload);
    return;
  }
  const uint32_t id = take_free(transfers_, free_transfers_);
  TransferState& ts = transfers_[id];
  // Every sprayed route starts on the same injection port (Cluster::sprayed_routes).
  ts.paths = std::move(paths);
  ts.unsent = t.bytes.count();
  ts.packets = static_cast<uint64_t>((ts.unsent + options_.mtu.count() - 1) / options_.mtu.count());
  ts.cut = 0;
  ts.left_last = 0;
  ts.received = 0;
  ts.last_cnp_sent = Time::max();
  const topology::LinkId last_link = ts.paths.front().back();
  ts.one_last_link = std::all_of(ts.paths.begin(), ts.paths.end(),
                                 [&](const auto& path) { return path.back() == last_link; });
  ts.done = &done;
  ts.payload = payload;
  ts.cap = t.max_rate;
  ++active_;

  const uint32_t first = ts.paths.front().front();
  const double line = ports_[first].bandwidth.bytes_per_s();
  ts.rp = ReactionPoint{.line = line, .current = line, .target = line, .next_send = engine.now(),
                        .last_change = engine.now(), .alpha_from = engine.now()};
  // A capped sender (one channel's thread block) writes its bytes at its cap: a packet leaves
  // once its bytes are written, the first one too, so B bytes take at least B / cap, as on flows.
  if (ts.cap > 0) ts.rp.next_send = engine.now() + capped_write_time(ts);
  ensure_inputs(first);
  Port& p = ports_[first];
  if (p.injecting.empty()) p.ready.push_back(injection_slot(p));
  p.injecting.push_back(id);
  if (ts.cap > 0) ++p.capped;
  try_send(engine, first);
}

Time PacketNetworkModel::capped_write_time(const TransferState& ts) const {
  return Bandwidth::bytes_per_s(ts.cap).transfer_time(Bytes(std::min(ts.unsent, options_.mtu.count())));
}

uint32_t PacketNetworkModel::injection_slot(const Port& p) const {
  return static_cast<uint32_t>(p.inputs.size() - 1);
}

void PacketNetworkModel::ensure_inputs(uint32_t port) {
  Port& p = ports_[port];
  if (p.inputs.empty()) p.inputs.resize(in_degree_[cluster_.link(port).from] + 1);
}

uint32_t PacketNetworkModel::new_packet(uint32_t transfer, uint32_t bytes) {
  const uint32_t id = take_free(packets_, free_packets_);
  TransferState& ts = transfers_[transfer];
  // Oblivious spraying: the transfer's packets take its routes in turn.
  const auto route = static_cast<uint16_t>(ts.cut++ % ts.paths.size());
  packets_[id] = Packet{transfer, bytes, kNone, 0, route, false, false, Time(), 0};
  return id;
}

uint32_t PacketNetworkModel::next_port(const Packet& p) const {
  const auto& path = transfers_[p.transfer].paths[p.route];
  return size_t{p.hop} + 1 < path.size() ? path[size_t{p.hop} + 1] : kNone;
}

void PacketNetworkModel::enqueue(uint32_t port, uint32_t slot, uint32_t packet) {
  Port& p = ports_[port];
  InputQueue& q = p.inputs[slot];
  packets_[packet].next = kNone;
  if (q.tail == kNone) {
    q.head = packet;
    p.ready.push_back(slot);
  } else {
    packets_[q.tail].next = packet;
  }
  q.tail = packet;
}

void PacketNetworkModel::try_send(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  if (p.busy || p.ready.empty()) return;
  const int64_t buffer = options_.buffer_per_port.count();
  const uint32_t inject = injection_slot(p);
  Time ready_at = Time::max();  // the earliest a paced sender here may inject
  for (size_t k = 0; k < p.ready.size(); ++k) {
    const uint32_t slot = p.ready[k];
    // The head packet of this input: a queued packet, or the next one cut from the transfer
    // whose turn it is to inject. It needs credits unless its path ends at this link's end (a
    // GPU, which never backpressures).
    uint32_t bytes;
    bool credited;
    uint32_t chosen = 0;  // with slot == inject: the index into p.injecting that sends
    if (slot == inject) {
      chosen = static_cast<uint32_t>(p.inject_next);
      if (options_.dcqcn.enabled || p.capped > 0) {
        chosen = next_injector(p, engine.now(), ready_at);
        if (chosen == kNone) continue;  // every sender here waits on its rate limiter
      }
      const TransferState& ts = transfers_[p.injecting[chosen]];
      bytes = static_cast<uint32_t>(std::min(ts.unsent, options_.mtu.count()));
      credited = ts.paths[ts.cut % ts.paths.size()].size() > 1;  // the route of the packet cut next
    } else {
      const Packet& head = packets_[p.inputs[slot].head];
      bytes = head.bytes;
      credited = next_port(head) != kNone;
    }
    if (credited && p.credits_used + bytes > buffer) continue;  // a credit's arrival retries

    p.ready.erase(p.ready.begin() + static_cast<std::ptrdiff_t>(k));
    uint32_t packet;
    if (slot == inject) {
      const uint32_t t = p.injecting[chosen];
      TransferState& ts = transfers_[t];
      packet = new_packet(t, bytes);
      ts.unsent -= bytes;
      if (options_.dcqcn.enabled) pace(engine.now(), ts.rp, bytes);
      // A capped sender's next packet leaves once its bytes are written, at the cap, from now.
      if (ts.cap > 0 && ts.unsent > 0) {
        ts.rp.next_send = std::max(ts.rp.next_send, engine.now() + capped_write_time(ts));
      }
      p.inject_next = chosen;
      if (ts.unsent == 0) {
        p.injecting.erase(p.injecting.begin() + static_cast<std::ptrdiff_t>(chosen));
        if (ts.cap > 0) --p.capped;
      } else {
        ++p.inject_next;
      }
      if (p.inject_next >= p.injecting.size()) p.inject_next = 0;
      if (!p.injecting.empty()) p.ready.push_back(slot);
    } else {
      InputQueue& q = p.inputs[slot];
      packet = q.head;
      p.queued -= packets_[packet].bytes;
      q.head = packets_[packet].next;
      if (q.head == kNone) {
        q.tail = kNone;
      } else {
        p.ready.push_back(slot);
      }
    }
    if (credited) {
      p.credits_used += bytes;
      peak_occupancy_ = std::max(peak_occupancy_, p.credits_used);
    }
    p.busy = true;
    p.on_wire = packet;
    ++packets_sent_;
    const Time serialize =
        bytes == options_.mtu.count() ? p.mtu_time : p.bandwidth.transfer_time(Bytes(bytes));
    // A zero-bandwidth link never finishes a packet; everything behind it stays put.
    if (serialize != Time::max()) engine.schedule_in(serialize, *this, port);
    return;
  }
  // Every input waits, on credits or on its rate limiter: a credit's arrival retries, and a paced
  // sender asks for a wake-up.
  if (ready_at != Time::max() && ready_at < p.wake_at) {
    p.wake_at = ready_at;
    engine.schedule_at(ready_at, *this, kWake | port);
  }
}

void PacketNetworkModel::on_event(sim::Engine& engine, uint64_t payload) {
  const auto id = static_cast<uint32_t>(payload);
  switch (payload & kKinds) {
    case kArrive: arrive_head(engine, id); return;
    case kWake:
      if (ports_[id].wake_at == engine.now()) ports_[id].wake_at = Time::max();
      try_send(engine, id);
      return;
    case kCnp: {
      TransferState& ts = transfers_[id];
      const auto generation = static_cast<uint32_t>((payload & ~kKinds) >> 32);
      // The transfer may have finished (and its slot been reused) while the CNP travelled.
      if ((ts.generation & kGenerationMask) == generation) take_cnp(engine.now(), ts.rp);
      return;
    }
    case kCredit: credits_arrive(engine, id); return;
    default: finish_transmit(engine, id);
  }
}

void PacketNetworkModel::finish_transmit(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  const uint32_t packet = p.on_wire;
  const Packet& pk = packets_[packet];
  p.busy = false;
  p.on_wire = kNone;
  p.bytes_sent += pk.bytes;
  // The packet has left the receive buffer of the link it came over (its last byte is out, as
  // store-and-forward frees it): the credits go back to that link's port. An injected packet
  // waited in host memory and took none.
  const uint32_t came_over = pk.hop > 0 ? transfers_[pk.transfer].paths[pk.route][pk.hop - 1U] : kNone;
  const int64_t bytes = pk.bytes;
  depart(engine, port, packet);
  try_send(engine, port);
  if (came_over != kNone) return_credits(engine, came_over, bytes);
}

void PacketNetworkModel::return_credits(sim::Engine& engine, uint32_t link, int64_t bytes) {
  const Time at = engine.now() + ports_[link ^ 1].latency;
  InputQueue& wire = credit_wires_[link];
  if (wire.tail != kNone && credits_[wire.tail].arrive_at == at) {  // one update carries both
    credits_[wire.tail].bytes += bytes;
    return;
  }
  const uint32_t id = take_free(credits_, free_credits_);
  credits_[id] = Credit{.arrive_at = at, .key = engine.take_key(), .bytes = bytes, .next = kNone};
  wire_push(engine, wire, credits_, id, kCredit | link);
}

template <class Item>
void PacketNetworkModel::wire_push(sim::Engine& engine, InputQueue& wire, std::vector<Item>& items,
                                   uint32_t id, uint64_t payload) {
  items[id].next = kNone;
  if (wire.tail == kNone) {
    wire.head = id;
    engine.schedule_keyed(items[id].arrive_at, items[id].key, *this, payload);
  } else {
    items[wire.tail].next = id;
  }
  wire.tail = id;
}

template <class Item>
uint32_t PacketNetworkModel::wire_pop(sim::Engine& engine, InputQueue& wire, std::vector<Item>& items,
                                      uint64_t payload) {
  const uint32_t id = wire.head;
  wire.head = items[id].next;
  if (wire.head == kNone) {
    wire.tail = kNone;
  } else {
    engine.schedule_keyed(items[wire.head].arrive_at, items[wire.head].key, *this, payload);
  }
  return id;
}

void PacketNetworkModel::credits_arrive(sim::Engine& engine, uint32_t link) {
  const uint32_t id = wire_pop(engine, credit_wires_[link], credits_, kCredit | link);
  ports_[link].credits_used -= credits_[id].bytes;
  free_credits_.push_back(id);
  try_send(engine, link);
}

void PacketNetworkModel::depart(sim::Engine& engine, uint32_t link, uint32_t packet) {
  Packet& pk = packets_[packet];
  TransferState& ts = transfers_[pk.transfer];
  // On its last link, bound for a GPU that never backpressures, a packet's arrival matters only
  // if it sends a CNP or completes the transfer. When every route of the transfer ends on this
  // link, its packets arrive in the order they leave on it, so the last to leave completes the
  // transfer: any other that sends no CNP is counted delivered now, with no event.
  if (ts.one_last_link && size_t{pk.hop} + 1 == ts.paths[pk.route].size()) {
    pk.completes = ++ts.left_last == ts.packets;
    if (!pk.completes && !pk.marked) {
      count_delivered(packet);
      return;
    }
  }
  pk.arrive_at = engine.now() + ports_[link].latency;
  // The key of this moment, not of the moment the previous packet arrives: same-time arrivals
  // then run in the order they would run with an event per packet.
  pk.key = engine.take_key();
  wire_push(engine, wires_[link], packets_, packet, kArrive | link);
}

void PacketNetworkModel::arrive_head(sim::Engine& engine, uint32_t link) {
  arrive(engine, wire_pop(engine, wires_[link], packets_, kArrive | link));
}

void PacketNetworkModel::arrive(sim::Engine& engine, uint32_t packet) {
  Packet& pk = packets_[packet];
  TransferState& ts = transfers_[pk.transfer];
  const auto& path = ts.paths[pk.route];
  const topology::LinkId over = path[pk.hop];
  ++pk.hop;
  if (pk.hop < path.size()) {
    const uint32_t port = path[pk.hop];
    ports_[port].queued += pk.bytes;
    peak_queued_ = std::max(peak_queued_, ports_[port].queued);
    if (options_.dcqcn.enabled && !pk.marked && marks_[port] && mark(port)) {
      pk.marked = true;
      ++ecn_marks_;
      ++ports_[port].marked;
    }
    ensure_inputs(port);
    enqueue(port, in_index_[over], packet);
    try_send(engine, port);
    return;
  }
  if (pk.marked) notify(engine, pk.transfer, path);
  // With one last link, its port marked the last packet to leave on it, which arrives last;
  // otherwise the receiver counts every packet.
  const bool complete = ts.one_last_link ? pk.completes : ++ts.received == ts.packets;
  const uint32_t transfer = pk.transfer;
  count_delivered(packet);
  if (!complete) return;
  engine.schedule_in(Time::zero(), *ts.done, ts.payload);
  ++ts.generation;
  --active_;
  free_transfers_.push_back(transfer);
}

void PacketNetworkModel::count_delivered(uint32_t packet) {
  delivered_ += Bytes(packets_[packet].bytes);
  free_packets_.push_back(packet);
}

uint32_t PacketNetworkModel::next_injector(const Port& p, Time now, Time& ready_at) {
  const size_t n = p.injecting.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (p.inject_next + i) % n;
    const Time at = transfers_[p.injecting[k]].rp.next_send;
    if (at <= now) return static_cast<uint32_t>(k);
    ready_at = std::min(ready_at, at);
  }
  return kNone;
}

bool PacketNetworkModel::mark(uint32_t port) {
  const DcqcnOptions& d = options_.dcqcn;
  const auto queued = static_cast<double>(ports_[port].queued);  // this packet included
  if (queued <= static_cast<double>(d.kmin.count())) return false;
  if (queued > static_cast<double>(d.kmax.count())) return true;
  const double p = d.pmax * (queued - static_cast<double>(d.kmin.count())) /
                   static_cast<double>(d.kmax.count() - d.kmin.count());
  return rngs_[port].uniform() < p;
}

void PacketNetworkModel::notify(sim::Engine& engine, uint32_t transfer,
                                const std::vector<topology::LinkId>& path) {
  TransferState& ts = transfers_[transfer];
  const Time now = engine.now();
  if (ts.last_cnp_sent != Time::max() && now - ts.last_cnp_sent < options_.dcqcn.cnp_interval) return;
  ts.last_cnp_sent = now;
  Time back = Time::zero();
  for (topology::LinkId l : path) back += ports_[l ^ 1].latency;  // the reverse links
  engine.schedule_in(back, *this,
                     kCnp | (uint64_t{ts.generation & kGenerationMask} << 32) | transfer);
}

void PacketNetworkModel::take_cnp(Time now, ReactionPoint& rp) {
  const DcqcnOptions& d = options_.dcqcn;
  catch_up(now, rp);
  rp.target = rp.current;
  rp.current = std::max(rp.current * (1 - rp.alpha / 2), d.min_rate.bytes_per_s());
  rp.alpha = (1 - d.g) * rp.alpha + d.g;
  rp.alpha_from = now;
  rp.last_change = now;
  rp.timer_events = 0;
  rp.byte_events = 0;
  rp.bytes_since = 0;
  ++cnps_;
}

void PacketNetworkModel::catch_up(Time now, ReactionPoint& rp) const {
  const DcqcnOptions& d = options_.dcqcn;
  const int64_t decays = (now - rp.alpha_from).ps() / d.alpha_period.ps();
  if (decays > 0) {
    rp.alpha *= std::pow(1 - d.g, static_cast<double>(decays));
    rp.alpha_from += Time::ps(decays * d.alpha_period.ps());
  }
  const int64_t due = (now - rp.last_change).ps() / d.increase_period.ps();
  while (rp.timer_events < due) {
    if (rp.current >= rp.line) {  // at line rate already: later events change nothing
      rp.timer_events = static_cast<int>(std::min<int64_t>(due, INT32_MAX));
      break;
    }
    ++rp.timer_events;
    increase(rp);
  }
}

void PacketNetworkModel::increase(ReactionPoint& rp) const {
  const DcqcnOptions& d = options_.dcqcn;
  const int most = std::max(rp.timer_events, rp.byte_events);
  const int least = std::min(rp.timer_events, rp.byte_events);
  if (least > d.fast_recovery) {
    rp.target += d.hyper_increase.bytes_per_s() * (least - d.fast_recovery);
  } else if (most > d.fast_recovery) {
    rp.target += d.additive_increase.bytes_per_s();
  }  // else fast recovery: the target stays
  rp.target = std::min(rp.target, rp.line);
  rp.current = std::min((rp.target + rp.current) / 2, rp.line);
}

void PacketNetworkModel::pace(Time now, ReactionPoint& rp, uint32_t bytes) {
  const DcqcnOptions& d = options_.dcqcn;
  catch_up(now, rp);
  rp.bytes_since += bytes;
  while (rp.bytes_since >= d.byte_counter.count()) {
    rp.bytes_since -= d.byte_counter.count();
    ++rp.byte_events;
    increase(rp);
  }
  rp.next_send = rp.current >= rp.line
                     ? now
                     : now + Bandwidth::bytes_per_s(rp.current).transfer_time(Bytes(bytes));
}

}  // namespace dtsim::network
