#include "network/packet/packet_model.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/container_hash/hash.hpp>


namespace dtsim::network {
namespace {

// The rate a link's port serializes at: line rate at the options' efficiency.
Bandwidth port_rate(const topology::Link& link, const PacketModelOptions& options) {
  return Bandwidth::bytes_per_s(link.bandwidth.bytes_per_s() * options.link_efficiency.of(link.kind));
}

}  // namespace

PacketNetworkModel::PacketNetworkModel(const topology::Cluster& cluster, PacketModelOptions options)
    : cluster_(cluster), options_(options) {
  if (options_.mtu.count() <= 0 || options_.mtu.count() > UINT32_MAX) {
    throw std::invalid_argument("packet model: mtu must be between 1 byte and 4 GiB");
  }
  if (cluster_.devices().size() > sim::kMaxSites) {
    throw std::invalid_argument("packet model: more devices than engine sites");
  }
  if (options_.sample_interval < Time::zero()) {
    throw std::invalid_argument("packet model: sample_interval must not be negative");
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
  const DctcpOptions& w = options_.dctcp;
  if (w.enabled && !(w.k.count() >= 0 && w.g > 0 && w.g <= 1 && w.initial_window >= options_.mtu)) {
    throw std::invalid_argument(
        "packet model: DCTCP needs k >= 0, 0 < g <= 1 and an initial window of at least one mtu");
  }
  if (w.enabled && options_.flow_control == FlowControl::lossy) {
    throw std::invalid_argument("packet model: DCTCP runs on credits or PFC, not lossy");
  }
  const auto links = cluster_.links();
  // Credits and CNPs travel back over the reverse link, l ^ 1 (topology/cluster.h).
  for (size_t l = 0; l < links.size(); ++l) {
    if ((l ^ 1) >= links.size() || links[l ^ 1].from != links[l].to || links[l ^ 1].to != links[l].from) {
      throw std::invalid_argument("packet model: links must come in pairs (l, l ^ 1), one per direction");
    }
  }
  ports_.resize(links.size());
  shards_.resize(1);
  marks_.resize(links.size());
  rngs_.reserve(links.size());
  in_index_.resize(links.size());
  in_degree_.assign(cluster_.devices().size(), 0);
  for (size_t l = 0; l < links.size(); ++l) {
    Port& p = ports_[l];
    p.bandwidth = port_rate(links[l], options_);
    p.latency = links[l].latency;
    p.mtu_time = p.bandwidth.transfer_time(options_.mtu);
    p.site = links[l].from;
    p.far = links[l].to;
    p.credit_limit = options_.buffer_per_port.count();
    in_index_[l] = in_degree_[links[l].to]++;
    marks_[l] = cluster_.device(links[l].from).kind == topology::DeviceKind::network_switch;
    // A stream per port, so that a port's marks depend on its own queue's history alone.
    rngs_.emplace_back(options_.dcqcn.seed, sim::stream_id("dcqcn-marking") + l);
  }
  if (options_.switch_buffer == SwitchBuffer::shared) {
    if (!(options_.dt_alpha > 0 && std::isfinite(options_.dt_alpha)) || options_.shared_buffer.count() <= 0 ||
        options_.shared_buffer.count() > (int64_t{1} << 31)) {
      throw std::invalid_argument("packet model: a shared buffer needs dt_alpha > 0 and between 1 byte and 2 GiB");
    }
    if (const std::string shortfall = shared_shortfall(cluster_, options_); !shortfall.empty()) {
      throw std::invalid_argument("packet model: " + shortfall);
    }
    std::vector<uint32_t> pool_of_device(cluster_.devices().size(), kNone);
    pool_of_.assign(links.size(), kNone);
    held_.assign(links.size(), 0);
    starved_.assign(links.size(), 0);
    for (size_t l = 0; l < links.size(); ++l) {
      const topology::DeviceId sw = links[l].to;
      if (cluster_.device(sw).kind != topology::DeviceKind::network_switch) continue;
      if (pool_of_device[sw] == kNone) {
        pool_of_device[sw] = static_cast<uint32_t>(pools_.size());
        const int64_t capacity = options_.shared_buffer.count();
        pools_.push_back({.capacity = capacity, .size = capacity, .used = 0, .peak = 0, .starved = {}});
      }
      pool_of_[l] = pool_of_device[sw];
      SharedPool& pool = pools_[pool_of_[l]];
      if (options_.flow_control == FlowControl::pfc) {
        pool.size -= pfc_headroom(cluster_, static_cast<topology::LinkId>(l), options_).count();
      } else if (options_.flow_control == FlowControl::credits) {
        // The first grant: one mtu, so that the link's port can start; later grants come from
        // the pool as its packets leave the switch.
        ports_[l].credit_limit = options_.mtu.count();
        held_[l] = options_.mtu.count();
        fill_pool(pool, options_.mtu.count());
      }
    }
  }
  if (options_.flow_control == FlowControl::pfc) {
    if (const std::string shortfall = pfc_shortfall(cluster_, options_); !shortfall.empty()) {
      throw std::invalid_argument("packet model: " + shortfall);
    }
    const int64_t buffer = options_.buffer_per_port.count();
    const int64_t mtu = options_.mtu.count();
    ingress_.resize(links.size());
    for (size_t l = 0; l < links.size(); ++l) {
      IngressQueue& q = ingress_[l];
      q.xoff = buffer - pfc_headroom(cluster_, static_cast<topology::LinkId>(l), options_).count();
      // Two packets of hysteresis, so that a queue near Xoff does not pause at every packet.
      q.xon = std::max<int64_t>(0, q.xoff - 2 * mtu);
      q.back = ports_[l ^ 1].latency + ports_[l ^ 1].bandwidth.transfer_time(kPauseFrame);
    }
  }
  if (options_.flow_control == FlowControl::lossy) {
    if (options_.mtu.count() >= (int64_t{1} << kAuxBytesBits) || options_.retransmit_timeout <= Time::zero()) {
      throw std::invalid_argument("packet model: lossy needs an mtu below 2 MiB and a positive retransmit timeout");
    }
    ingress_.resize(links.size());
  }
  if (options_.credit_batch.count() < 0 || options_.credit_batch.count() + options_.mtu.count() > UINT32_MAX) {
    throw std::invalid_argument("packet model: credit_batch must be between 0 and 4 GiB less one mtu");
  }
  eager_ = options_.flow_control == FlowControl::credits && options_.switch_buffer == SwitchBuffer::dedicated;
  paced_ = options_.dcqcn.enabled || options_.dctcp.enabled || options_.flow_control == FlowControl::lossy;
  if (options_.burst == 0 || options_.burst > UINT8_MAX) {
    throw std::invalid_argument("packet model: burst must be between 1 and 255 packets");
  }
  bursting_ = eager_ && !paced_ && options_.burst > 1 && options_.mtu.count() <= UINT16_MAX;
  if (bursting_) taken_back_.resize(links.size());
  if (options_.round == 0 || options_.round > kRoundMax) {
    throw std::invalid_argument("packet model: round must be between 1 and 16 packets");
  }
  const bool rounding = eager_ && !paced_ && options_.round > 1;
  passing_ = eager_ && !paced_ && options_.pass_last;
  marking_ = options_.dcqcn.enabled || options_.dctcp.enabled;
  // Rounds at each device: the most packets a round there may hold (1: none).
  std::vector<uint32_t> round_at(cluster_.devices().size(), rounding ? options_.round : 1);
  Time slowest = Time::zero();  // the longest serialization of a full packet on any port
  for (const Port& p : ports_) slowest = std::max(slowest, p.mtu_time);
  if (eager_ && options_.credit_batch.count() > 0 && slowest != Time::max()) {
    const int64_t buffer = options_.buffer_per_port.count();
    const int64_t mtu = options_.mtu.count();
    while ((buffer >> stamp_shift_) > static_cast<int64_t>(kStampMax)) ++stamp_shift_;
    credit_back_.resize(links.size());
    // A round's packets free the credits of the links they came over as it is cut, each as its
    // serialization ends, up to a round's serializations later: a batch that holds them may go
    // back that much later than the other credits it holds would have, and the link's port must
    // have the room to cover that too. Rounds at a device may take at most 1 / kRoundShare of the
    // room the batches of the links into it have (none where that is not a packet's worth).
    std::vector<Time> slowest_at(cluster_.devices().size(), Time::zero());
    for (const Port& p : ports_) slowest_at[p.site] = std::max(slowest_at[p.site], p.mtu_time);
    std::vector<int64_t> room(links.size());
    std::vector<int64_t> per_round_packet(links.size());
    for (size_t l = 0; l < links.size(); ++l) {
      const Port& p = ports_[l];
      // What l's port can send, back to back at its rate, from the first packet its far end has
      // not seen (it started at most a latency and a serialization before that end's event) to
      // the moment credits the far end returns at its next event reach the port (at most a
      // serialization there, for the packet being freed, and the reverse latency later), with a
      // packet more for the rounding; the port needs room for one packet more after that.
      const Time span = p.latency + p.mtu_time + slowest + ports_[l ^ 1].latency;
      const auto reach = static_cast<int64_t>(std::ceil(p.bandwidth.bytes_per_s() * span.seconds()));
      room[l] = buffer - reach - 3 * mtu;
      per_round_packet[l] =
          static_cast<int64_t>(std::ceil(p.bandwidth.bytes_per_s() * slowest_at[p.far].seconds()));
      uint32_t& most = round_at[p.far];
      if (room[l] <= 0 || per_round_packet[l] <= 0) {
        most = 1;
      } else {
        most = static_cast<uint32_t>(
            std::min<int64_t>(most, 1 + room[l] / kRoundShare / per_round_packet[l]));
      }
    }
    for (size_t l = 0; l < links.size(); ++l) {
      credit_back_[l].defer_below = room[l] - int64_t{round_at[ports_[l].far] - 1} * per_round_packet[l];
    }
  }
  if (rounding) {
    // A port rounds only on the one link between its two devices (Port::round_most).
    std::unordered_map<uint64_t, uint32_t> between;  // links by (from, to)
    auto pair = [&](size_t l) { return (uint64_t{links[l].from} << 32) | links[l].to; };
    for (size_t l = 0; l < links.size(); ++l) ++between[pair(l)];
    for (size_t l = 0; l < links.size(); ++l) {
      if (between[pair(l)] == 1) ports_[l].round_most = static_cast<uint8_t>(round_at[ports_[l].site]);
    }
  }
}

Bytes PacketNetworkModel::pfc_headroom(const topology::Cluster& cluster, topology::LinkId link,
                                       const PacketModelOptions& options) {
  const topology::Link& there = cluster.link(link);
  const topology::Link& back = cluster.link(link ^ 1);
  return network::pfc_headroom({.rate = port_rate(there, options),
                                .latency = there.latency,
                                .back_latency = back.latency,
                                .pause_time = port_rate(back, options).transfer_time(kPauseFrame)},
                               options.mtu);
}

std::string PacketNetworkModel::pfc_shortfall(const topology::Cluster& cluster, const PacketModelOptions& options) {
  if (options.flow_control != FlowControl::pfc) return {};
  const auto links = cluster.links();
  for (size_t l = 0; l < links.size(); ++l) {
    const topology::Link& link = links[l];
    // A shared switch buffer sets its links' headroom aside from its pool (shared_shortfall).
    if (options.switch_buffer == SwitchBuffer::shared &&
        cluster.device(link.to).kind == topology::DeviceKind::network_switch) {
      continue;
    }
    const std::string name = "link " + std::to_string(l) + " (" + cluster.device(link.from).name + " -> " +
                             cluster.device(link.to).name + ", " + to_string(link.latency) + ", " +
                             to_string_bits(port_rate(link, options)) + ")";
    if (port_rate(cluster.link(static_cast<topology::LinkId>(l ^ 1)), options).is_zero()) {
      return "PFC: " + name + " has no reverse bandwidth to carry its pause frames";
    }
    const Bytes need = pfc_headroom(cluster, static_cast<topology::LinkId>(l), options);
    if (options.buffer_per_port < need) {
      return "PFC: " + name + " needs a buffer of at least " + std::to_string(need.count()) +
             " bytes, its headroom (rate x (latency there and back + a 64-byte pause frame) + 2 x mtu); "
             "buffer_per_port is " + std::to_string(options.buffer_per_port.count()) + " bytes";
    }
  }
  return {};
}

std::string PacketNetworkModel::shared_shortfall(const topology::Cluster& cluster,
                                                 const PacketModelOptions& options) {
  if (options.switch_buffer != SwitchBuffer::shared) return {};
  const auto links = cluster.links();
  std::vector<int64_t> need(cluster.devices().size(), 0);
  std::vector<int64_t> count(cluster.devices().size(), 0);
  for (size_t l = 0; l < links.size(); ++l) {
    const topology::DeviceId sw = links[l].to;
    if (cluster.device(sw).kind != topology::DeviceKind::network_switch) continue;
    ++count[sw];
    need[sw] += options.flow_control == FlowControl::pfc
                    ? pfc_headroom(cluster, static_cast<topology::LinkId>(l), options).count()
                : options.flow_control == FlowControl::credits ? options.mtu.count()
                                                               : 0;
  }
  for (size_t d = 0; d < need.size(); ++d) {
    if (count[d] == 0) continue;
    const int64_t least = need[d] + (options.flow_control == FlowControl::credits ? 0 : options.mtu.count());
    if (options.shared_buffer.count() >= least) continue;
    const char* what = options.flow_control == FlowControl::pfc
                           ? " links into it need their PFC headroom and an mtu more: "
                       : options.flow_control == FlowControl::credits ? " links into it need an mtu of credits each: "
                                                                      : " links into it need an mtu: ";
    return "shared buffer: switch " + cluster.device(static_cast<topology::DeviceId>(d)).name + "'s " +
           std::to_string(count[d]) + what + std::to_string(least) + " bytes; shared_buffer is " +
           std::to_string(options.shared_buffer.count()) + " bytes";
  }
  return {};
}

Bytes PacketNetworkModel::pool_held(topology::LinkId link) const {
  if (pool_of_.empty() || pool_of_.at(link) == kNone) return Bytes(0);
  return Bytes(options_.flow_control == FlowControl::credits ? held_[link] : ingress_[link].bytes);
}

Bytes PacketNetworkModel::peak_pool() const {
  int64_t most = 0;
  for (const SharedPool& pool : pools_) most = std::max(most, pool.peak);
  return Bytes(most);
}

double PacketNetworkModel::threshold(const SharedPool& pool) const {
  return options_.dt_alpha * static_cast<double>(pool.size - pool.used);
}

void PacketNetworkModel::fill_pool(SharedPool& pool, int64_t bytes) {
  pool.used += bytes;
  pool.peak = std::max(pool.peak, pool.used);
}

bool PacketNetworkModel::grant(sim::Engine& engine, uint32_t link) {
  SharedPool& pool = pools_[pool_of_[link]];
  const int64_t mtu = options_.mtu.count();
  int64_t granted = 0;
  // The threshold's rule, an mtu at a time: the link may take more while it holds less than the
  // threshold and the pool has room.
  while (static_cast<double>(held_[link]) < threshold(pool) && pool.used + mtu <= pool.size) {
    held_[link] += mtu;
    fill_pool(pool, mtu);
    granted += mtu;
  }
  if (granted == 0) return false;
  engine.schedule_at_site(engine.now() + ports_[link ^ 1].latency, ports_[link].site, *this,
                          event(kCredit, link), static_cast<uint32_t>(granted));
  return true;
}

void PacketNetworkModel::release_shared(sim::Engine& engine, uint32_t link, int64_t bytes) {
  SharedPool& pool = pools_[pool_of_[link]];
  held_[link] -= bytes;
  pool.used -= bytes;
  // The freed bytes raise the threshold: the link itself first, then those starved before, in the
  // order they starved.
  if (grant(engine, link)) {
    starved_[link] = 0;  // leaves the list below
  } else if (starved_[link] == 0) {
    starved_[link] = 1;
    pool.starved.push_back(link);
  }
  size_t kept = 0;
  for (const uint32_t s : pool.starved) {
    if (starved_[s] == 0) continue;
    if (s != link && grant(engine, s)) {
      starved_[s] = 0;
      continue;
    }
    pool.starved[kept++] = s;
  }
  pool.starved.resize(kept);
}

void PacketNetworkModel::set_partitions(uint32_t partitions) {
  if (partitions == 0 || partitions > kMaxPartitions) {
    throw std::invalid_argument("packet model: between 1 and 64 partitions");
  }
  if (sum([](const Shard& sh) { return sh.started; }) > 0) {
    throw std::logic_error("packet model: partitions are set before the first transfer");
  }
  shards_.clear();
  shards_.resize(partitions);
}

uint64_t PacketNetworkModel::packet_hops(Bytes bytes, size_t hops, Bytes mtu) {
  if (bytes.count() <= 0 || mtu.count() <= 0) return 0;
  const auto packets = static_cast<uint64_t>((bytes.count() + mtu.count() - 1) / mtu.count());
  return packets * hops;
}

Bytes PacketNetworkModel::bytes_sent_on(topology::LinkId link) const {
  return Bytes(ports_.at(link).bytes_sent);
}

void PacketNetworkModel::wrong_partition(uint32_t partition) const {
  throw std::logic_error("packet model: run on partition " + std::to_string(partition) + " of a model set for " +
                         std::to_string(shards_.size()) + " (set_partitions)");
}

inline uint64_t PacketNetworkModel::encode(const Packet& p, uint64_t stamp) const {
  const uint64_t seq_low = options_.flow_control == FlowControl::lossy ? p.seq & ((1U << kSeqLowBits) - 1) : stamp;
  return uint64_t{p.transfer} | (uint64_t{p.hop} << 32) | (uint64_t{p.route} << 40) |
         (uint64_t{p.marked} << 48) | (uint64_t{p.completes} << 49) | (seq_low << kStampShift);
}

inline uint64_t PacketNetworkModel::stamp(int64_t credits_used) const {
  if (credit_back_.empty()) return 0;
  const int64_t unit = int64_t{1} << stamp_shift_;
  return std::min(kStampMax, static_cast<uint64_t>((credits_used + unit - 1) >> stamp_shift_));
}

inline uint32_t PacketNetworkModel::aux_of(const Packet& p) const {
  if (options_.flow_control != FlowControl::lossy) return p.bytes;
  return p.bytes | ((p.seq >> kSeqLowBits) << kAuxBytesBits);
}

inline uint32_t PacketNetworkModel::bytes_of(uint32_t aux) const {
  if (options_.flow_control == FlowControl::lossy) return aux & ((1U << kAuxBytesBits) - 1);
  return bursting_ ? aux & UINT16_MAX : aux;
}

inline PacketNetworkModel::Packet PacketNetworkModel::decode(uint64_t fields, uint32_t aux) const {
  const bool lossy = options_.flow_control == FlowControl::lossy;
  return Packet{.transfer = transfer_of(fields),
                .bytes = bytes_of(aux),
                .next = kNone,
                .hop = hop_of(fields),
                .route = route_of(fields),
                .marked = ((fields >> 48) & 1) != 0,
                .completes = ((fields >> 49) & 1) != 0,
                .seq = lossy ? static_cast<uint32_t>((fields >> 50) & ((1U << kSeqLowBits) - 1)) |
                                   ((aux >> kAuxBytesBits) << kSeqLowBits)
                             : 0};
}

void PacketNetworkModel::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                               uint64_t payload) {
  Shard& sh = shard(engine);
  ++sh.started;
  // Its routes (transfer_paths), into the shard's own set: no allocation once it has grown.
  topology::RouteSet& paths = sh.route;
  route_transfer(cluster_, t, paths);
  if (paths.empty()) {  // to itself, or no bytes: only the route's latency (empty_message_latency)
    sh.delivered += t.bytes.count();
    ++sh.completed;
    if (t.drained != nullptr) {
      engine.schedule_at_site(engine.now(), cluster_.gpu_device(t.src_gpu), *t.drained, t.drained_payload);
    }
    // Done where the message lands, as a transfer's last packet would be.
    engine.schedule_at_site(engine.now() + empty_message_latency(cluster_, t),
                            cluster_.gpu_device(t.dst_gpu), done, payload);
    return;
  }
  const uint32_t first = paths.front().front();
  if (engine.partition_of(ports_[first].site) != engine.partition()) {
    throw std::logic_error("packet model: a transfer from GPU " + std::to_string(t.src_gpu) +
                           " started in an event of another partition");
  }
  // A packet carries its hop and route in a byte each (encode).
  const auto too_long = [&] {
    for (size_t i = 0; i < paths.size(); ++i) {
      if (paths[i].size() > UINT8_MAX) return true;
    }
    return false;
  };
  if (paths.size() > UINT8_MAX || too_long()) {
    throw std::invalid_argument("packet model: a route of more than 255 links or 255 routes");
  }
  // A lossy packet carries its index in 21 bits (encode).
  if (options_.flow_control == FlowControl::lossy && packet_hops(t.bytes, 1, options_.mtu) > kMaxLossyPackets) {
    throw std::invalid_argument("packet model: a lossy transfer of more than 2^21 packets");
  }
  const uint32_t slot = sh.transfers.take();
  if (slot > kSlotMask) throw std::length_error("packet model: too many transfers in flight");
  // Both pools take and give back the same slots in the same order.
  if (sh.routes.take() != slot) throw std::logic_error("packet model: a transfer's routes out of step with it");
  const uint32_t id = (static_cast<uint32_t>(&sh - shards_.data()) << kSlotBits) | slot;
  TransferState& ts = sh.transfers[slot];
  Routes& rt = sh.routes[slot];
  // Every sprayed route starts on the same injection port (Cluster::sprayed_routes).
  set_routes(rt, sh.middles, paths);
  if (rt.hops == 0) {
    ts.paths = paths.lists();
  } else {
    ts.paths.clear();
  }
  rt.unsent = t.bytes.count();
  ts.packets = packet_hops(t.bytes, 1, options_.mtu);
  ts.total = t.bytes.count();
  ts.acked = 0;
  ts.high = 0;
  ts.rto_at = Time::max();
  ts.finished = false;
  ts.went_back_to = UINT64_MAX;
  ts.backoff = Time::zero();
  ts.last_seq = 0;
  ts.nak_pending = false;
  rt.cut = 0;
  rt.to_leave = ts.packets;
  ts.received = 0;
  ts.last_cnp_sent = Time::max();
  ts.cnps_sent = 0;
  ts.cnps_back = 0;
  ts.cnps_awaited = UINT32_MAX;
  ts.back = Time::zero();
  for (topology::LinkId l : paths.front()) ts.back += ports_[l ^ 1].latency;  // the reverse links
  ts.done = &done;
  ts.payload = payload;
  ts.drained = t.drained;
  ts.drained_payload = t.drained_payload;
  ts.cap = t.max_rate;
  // TCP's window governs what crosses the network; a copy over NVLink or PCIe alone is not TCP's.
  rt.windowed = options_.dctcp.enabled &&
                std::any_of(paths.front().begin(), paths.front().end(), [&](topology::LinkId l) {
                  return cluster_.link(l).kind == topology::LinkKind::network;
                });
  ts.window = Window{.cwnd = static_cast<double>(options_.dctcp.initial_window.count()),
                     .slow_start = options_.dctcp.slow_start};

  const double line = ports_[first].bandwidth.bytes_per_s();
  ts.rp = ReactionPoint{.line = line, .current = line, .target = line, .next_send = engine.now(),
                        .last_change = engine.now(), .alpha_from = engine.now()};
  // A capped sender (one channel's thread block) writes its bytes at its cap: a packet leaves
  // once its bytes are written, the first one too, so B bytes take at least B / cap, as on flows.
  if (ts.cap > 0) ts.rp.next_send = engine.now() + capped_write_time(ts, rt);
  ensure_inputs(first);
  Port& p = ports_[first];
  if (p.burst_pending != 0) take_back(engine, sh, first);
  if (p.injecting.empty()) p.ready.push_back(injection_slot(p));
  p.injecting.push_back(id);
  if (ts.cap > 0) ++p.capped;
  try_send(engine, first);
}

void PacketNetworkModel::set_routes(Routes& rt, MiddleStore& store, const topology::RouteSet& paths) {
  const std::span<const topology::LinkId> first = paths.front();
  const size_t n = first.size();
  const size_t count = paths.size();
  rt = Routes{};
  rt.count = static_cast<uint8_t>(count);
  // Route i's k-th link; every route has n links once the lengths agree.
  const auto link = [&](size_t i, size_t k) { return paths.links[i * n + k]; };
  const auto same_length = [&] {
    for (size_t i = 0; i < count; ++i) {
      if (paths.ends[i] != (i + 1) * n) return false;
    }
    return true;
  };
  if (!same_length()) {
    rt.one_last_link = std::all_of(paths.ends.begin(), paths.ends.end(),
                                   [&](uint32_t end) { return paths.links[end - 1] == first.back(); });
    return;
  }
  rt.hops = static_cast<uint8_t>(n);
  // The links every route shares at its start and at its end (one route: all its links), as many
  // as `edge` holds: the end's up to half of it, the start's the rest.
  const auto shared = [&](auto at) {
    size_t k = 0;
    const auto agree = [&](size_t j) {
      for (size_t i = 1; i < count; ++i) {
        if (at(i, j) != at(0, j)) return false;
      }
      return true;
    };
    while (k < n && agree(k)) ++k;
    return k;
  };
  const size_t starts = shared([&](size_t i, size_t k) { return link(i, k); });
  const size_t ends = shared([&](size_t i, size_t k) { return link(i, n - 1 - k); });
  rt.one_last_link = ends > 0;
  const size_t head = std::min(starts, kEdgeLinks - std::min(ends, kEdgeLinks / 2));
  const size_t tail = std::min(ends, std::min(n - head, kEdgeLinks - head));
  const size_t mid = n - head - tail;
  rt.head = static_cast<uint8_t>(head);
  rt.mid = static_cast<uint8_t>(mid);
  std::copy_n(first.begin(), head, rt.edge.begin());
  std::copy_n(first.end() - static_cast<std::ptrdiff_t>(tail), tail,
              rt.edge.begin() + static_cast<std::ptrdiff_t>(head));
  if (mid == 0) return;
  std::vector<topology::LinkId>& middles = store.scratch;
  middles.clear();
  for (size_t i = 0; i < count; ++i) {
    const auto from = paths.links.begin() + static_cast<std::ptrdiff_t>(i * n + head);
    middles.insert(middles.end(), from, from + static_cast<std::ptrdiff_t>(mid));
  }
  rt.middle = intern(store, middles);
}

const topology::LinkId* PacketNetworkModel::intern(MiddleStore& store, std::span<const topology::LinkId> links) {
  const uint64_t hash = boost::hash_range(links.begin(), links.end());
  for (auto [it, end] = store.index.equal_range(hash); it != end; ++it) {
    const auto [at, size] = it->second;
    if (size == links.size() && std::equal(links.begin(), links.end(), at)) return at;
  }
  auto* at = static_cast<topology::LinkId*>(store.arena->take(links.size() * sizeof(topology::LinkId)));
  std::copy(links.begin(), links.end(), at);
  store.index.emplace(hash, std::pair<const topology::LinkId*, size_t>{at, links.size()});
  return at;
}

Time PacketNetworkModel::capped_write_time(const TransferState& ts, const Routes& rt) const {
  return Bandwidth::bytes_per_s(ts.cap).transfer_time(Bytes(std::min(rt.unsent, options_.mtu.count())));
}

uint32_t PacketNetworkModel::injection_slot(const Port& p) const {
  return static_cast<uint32_t>(p.inputs.size() - 1);
}

void PacketNetworkModel::make_inputs(uint32_t port) {
  Port& p = ports_[port];
  p.inputs.resize(in_degree_[cluster_.link(port).from] + 1);
  p.ready.reserve(p.inputs.size());
}

inline PacketNetworkModel::Packet PacketNetworkModel::new_packet(Shard& sh, TransferState& ts, Routes& rt,
                                                                  uint32_t transfer_id, uint32_t bytes) {
  // Oblivious spraying: the transfer's packets take its routes in turn.
  const auto seq = static_cast<uint32_t>(rt.cut);
  const auto route = static_cast<uint8_t>(rt.count == 1 ? 0 : rt.cut % rt.count);
  ++rt.cut;
  const size_t hops = route_length(rt, transfer_id, route);
  ++sh.injected;
  // Only a lossy sender cuts a packet again (a burst's packets taken back were never sent).
  if (options_.flow_control == FlowControl::lossy) {
    if (seq < ts.high) ++sh.retransmitted;
    ts.high = std::max(ts.high, rt.cut);
  }
  return Packet{.transfer = transfer_id, .bytes = bytes, .next = kNone, .hop = 0, .route = route,
                .last = hops == 1, .over = kNone, .seq = seq};
}

uint32_t PacketNetworkModel::link_of(const Packet& p) {
  const topology::LinkId l = link_at(routes_of(p.transfer), p.transfer, p.route, p.hop);
  return p.cnp ? l ^ 1 : l;
}

void PacketNetworkModel::release(uint32_t id) {
  ++transfer(id).generation;
  Shard& sh = shards_[id >> kSlotBits];
  sh.transfers.give_back(id & kSlotMask);
  sh.routes.give_back(id & kSlotMask);
}

inline void PacketNetworkModel::enqueue(Shard& sh, uint32_t port, uint32_t slot, uint32_t packet) {
  Port& p = ports_[port];
  InputQueue& q = p.inputs[slot];
  sh.packets[packet].next = kNone;
  if (q.tail == kNone) {
    q.head = packet;
    // Not an input of a round that has yet to settle: it is in the ring, and settle_round puts it
    // back at the end as its packet starts.
    bool in_ring = false;
    for (uint32_t k = 0; k < p.round_pending && !in_ring; ++k) in_ring = p.ready[k] == slot;
    if (!in_ring) p.ready.push_back(slot);
  } else {
    sh.packets[q.tail].next = packet;
  }
  q.tail = packet;
}

inline void PacketNetworkModel::sample_before(uint32_t port, Time now) {
  const int64_t interval = options_.sample_interval.ps();
  if (interval <= 0 || now <= Time::zero()) return;
  Port& p = ports_[port];
  // The ticks next_tick .. (the last before now) all saw the queue as it is.
  const int64_t last = (now.ps() - 1) / interval;
  if (last < p.next_tick) return;
  const int64_t before = p.samples.empty() ? 0 : p.samples.back().bytes.count();
  if (p.queued != before) p.samples.push_back({Time::ps(p.next_tick * interval), Bytes(p.queued)});
  p.next_tick = last + 1;
}

inline void PacketNetworkModel::change_queue(Shard& sh, uint32_t port, Time now, int64_t bytes) {
  sample_before(port, now);
  Port& p = ports_[port];
  p.queued += bytes;
  p.peak_queued = std::max(p.peak_queued, p.queued);
  sh.peak_queued = std::max(sh.peak_queued, p.queued);
}

std::optional<PortStats> PacketNetworkModel::port_stats(topology::LinkId link) const {
  const Port& p = ports_.at(link);
  PortStats st{.peak_egress = Bytes(p.peak_queued),
               .peak_ingress = Bytes(0),
               .pause_frames = p.pause_frames,
               .paused = Time::ps(p.paused_ps),
               .drops = 0,
               .ecn_marks = p.marked};
  if (!ingress_.empty()) {
    st.peak_ingress = Bytes(ingress_[link].peak);
    st.drops = ingress_[link].drops;
  }
  return st;
}

std::vector<PortTimeline> PacketNetworkModel::port_timelines(Time end) const {
  std::vector<PortTimeline> out;
  const int64_t interval = options_.sample_interval.ps();
  if (interval <= 0) return out;
  for (size_t l = 0; l < ports_.size(); ++l) {
    const Port& p = ports_[l];
    PortTimeline t{.port = static_cast<topology::LinkId>(l), .depth = p.samples, .paused = p.pauses};
    // The ticks not yet sampled see the queue as it is now: the first of them closes the track.
    const int64_t before = t.depth.empty() ? 0 : t.depth.back().bytes.count();
    if (p.queued != before) {
      t.depth.push_back({Time::ps(p.next_tick * interval), Bytes(p.queued)});
    }
    for (PauseSpan& span : t.paused) span.to = std::min(span.to, end);
    if (!t.depth.empty() || !t.paused.empty()) out.push_back(std::move(t));
  }
  return out;
}

void PacketNetworkModel::try_send(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  // Still serializing: the next packet starts once it is done, at the finish event, which sorts
  // among the events of its instant by its own key; an event of that instant that sorts before it
  // (an arrival, a credit) changes what waits but starts nothing, so that which packet goes next
  // does not depend on whether such an event happens to fall there (credits in batches, rounds).
  if (eager_ && (engine.now() < p.free_at || (p.finish_pending && engine.now() == p.free_at))) {
    return ensure_finish(engine, port);
  }
  // A paused port finishes the packet on its serializer but starts no other.
  if (p.busy || p.paused || p.ready.empty()) return;
  // Most calls end above (a port still serializing), with no register saved: the rest is a call.
  return send_next(engine, port);
}

void PacketNetworkModel::send_next(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  Shard& sh = shard(engine);
  if (p.round_pending != 0) {  // its last round has ended (free_at): every packet of it has started
    settle_round(engine, sh, port);
    if (p.ready.empty()) return;
  }
  if (p.round_most > 1 && p.injecting.empty()) {
    if (const uint32_t n = round_size(sh, p, port); n > 1) {
      serve_round(engine, sh, port, n);
      return;
    }
  }
  const bool credits = options_.flow_control == FlowControl::credits;
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
    TransferState* sender = nullptr;  // and its transfer
    Routes* sender_routes = nullptr;
    if (slot == inject) {
      chosen = static_cast<uint32_t>(p.inject_next);
      if (paced_ || p.capped > 0) {
        chosen = next_injector(p, engine.now(), ready_at);
        if (chosen == kNone) continue;  // every sender here waits on its rate limiter
      }
      sender = &transfer(p.injecting[chosen]);
      sender_routes = &routes_of(p.injecting[chosen]);
      bytes = static_cast<uint32_t>(std::min(sender_routes->unsent, options_.mtu.count()));
      // The route of the packet cut next (with routes all as long, any of them).
      const size_t route = sender_routes->cut % sender_routes->count;
      credited = credits && route_length(*sender_routes, p.injecting[chosen], route) > 1;
    } else {
      const Packet& head = sh.packets[p.inputs[slot].head];
      bytes = head.bytes;
      credited = credits && !head.last;
    }
    if (credited && p.credits_used + bytes > p.credit_limit) continue;  // a credit's arrival retries

    p.ready.erase(k);
    if (slot == inject) {
      const uint32_t t = p.injecting[chosen];
      TransferState& ts = *sender;
      Routes& rt = *sender_routes;
      const uint32_t burst = burst_size(engine, p, port, chosen);
      Packet pk = new_packet(sh, ts, rt, t, bytes);
      rt.unsent -= bytes;
      if (options_.dcqcn.enabled) pace(engine.now(), ts.rp, bytes);
      if (rt.windowed) {
        ts.window.in_flight += bytes;
        ts.window.sent += bytes;
      }
      // A capped sender's next packet leaves once its bytes are written, at the cap, from now
      // (none is where the port counts no capped sender: its record is not read).
      if (p.capped > 0 && ts.cap > 0 && rt.unsent > 0) {
        ts.rp.next_send = std::max(ts.rp.next_send, engine.now() + capped_write_time(ts, rt));
      }
      p.inject_next = chosen;
      if (rt.unsent == 0) {
        p.injecting.erase(p.injecting.begin() + static_cast<std::ptrdiff_t>(chosen));
        if (ts.cap > 0) --p.capped;
        // Its last packet is cut and on the sender's link: the bytes have left the sender (once:
        // a lossy sender that goes back cuts its last packet again).
        if (ts.drained != nullptr) {
          engine.schedule_at_site(engine.now(), p.site, *ts.drained, ts.drained_payload);
          ts.drained = nullptr;
        }
        // Lossy: the last packet is out; without the completion by then, the sender goes back.
        if (options_.flow_control == FlowControl::lossy) {
          ts.rto_at = engine.now() + options_.retransmit_timeout;
          engine.schedule_at_site(ts.rto_at, p.site, *this, event(kRto, t));
        }
      } else {
        ++p.inject_next;
      }
      if (p.inject_next >= p.injecting.size()) p.inject_next = 0;
      if (!p.injecting.empty()) p.ready.push_back(slot);
      if (burst > 1) {
        send_burst(engine, sh, port, pk, chosen, burst);
      } else {
        begin(engine, sh, port, pk, kNone, credited);
      }
    } else {
      InputQueue& q = p.inputs[slot];
      const uint32_t packet = q.head;
      Packet& pk = sh.packets[packet];
      change_queue(sh, port, engine.now(), -int64_t{pk.bytes});
      q.head = pk.next;
      if (q.head == kNone) {
        q.tail = kNone;
      } else {
        p.ready.push_back(slot);
      }
      begin(engine, sh, port, pk, packet, credited);
    }
    return;
  }
  // Every input waits, on credits or on its rate limiter: a credit's arrival retries, and a paced
  // sender asks for a wake-up.
  if (ready_at != Time::max() && ready_at < p.wake_at) {
    p.wake_at = ready_at;
    engine.schedule_at_site(ready_at, p.site, *this, event(kWake, port));
  }
}

inline void PacketNetworkModel::begin(sim::Engine& engine, Shard& sh, uint32_t port, Packet& pk, uint32_t packet,
                                      bool credited) {
  Port& p = ports_[port];
  const uint32_t bytes = pk.bytes;
  if (credited) {
    p.credits_used += bytes;
    sh.peak_occupancy = std::max(sh.peak_occupancy, p.credits_used);
  }
  ++sh.packets_sent;
  const Time serialize = serialization(p, bytes);
  if (eager_) {
    send_now(engine, sh, port, pk, packet, serialize);
    return;
  }
  if (packet == kNone) {  // it stays on the serializer until its finish event
    packet = take_packet(sh);
    sh.packets[packet] = pk;
  }
  p.busy = true;
  p.on_wire = packet;
  // A zero-bandwidth link never finishes a packet; everything behind it stays put.
  if (serialize != Time::max()) {
    engine.schedule_at_site(engine.now() + serialize, p.site, *this, event(kFinish, port));
  }
}

inline void PacketNetworkModel::send_now(sim::Engine& engine, Shard& sh, uint32_t port, Packet& pk, uint32_t packet,
                                         Time serialize) {
  Port& p = ports_[port];
  // A zero-bandwidth link never finishes a packet; everything behind it stays put.
  if (serialize == Time::max()) {
    p.free_at = Time::max();
    return;
  }
  const Time left = engine.now() + serialize;
  p.free_at = left;
  p.finish_key = engine.take_key();
  p.bytes_sent += pk.bytes;
  // As finish_transmit, at the instant the last byte is out: the packet leaves the receive buffer
  // of the link it came over, whose credits go back.
  const uint32_t over = pk.over;
  const int64_t bytes = pk.bytes;
  depart(engine, sh, port, pk, packet, left, stamp(p.credits_used));
  if (over != kNone) return_credits(engine, over, bytes, left);
  ensure_finish(engine, port);
}

inline void PacketNetworkModel::ensure_finish(sim::Engine& engine, uint32_t port) {
  const Port& p = ports_[port];
  if (p.finish_pending || p.ready.empty() || p.free_at == Time::max()) return;
  return queue_finish(engine, port);
}

void PacketNetworkModel::queue_finish(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  p.finish_pending = true;
  engine.schedule_keyed(p.free_at, p.finish_key, *this, event(kFinish, (uint64_t{p.finish_gen} << 32) | port));
}

inline int64_t PacketNetworkModel::room_ahead(const Port& p, uint32_t port) const {
  // Credits only come back meanwhile, so a packet with its credits at hand now has them at its
  // start.
  int64_t room = p.credit_limit - p.credits_used;
  if (!credit_back_.empty()) {
    // Each packet carries the credits in use as if none came back before it starts, at least what
    // they will be: the far end decides as it would have while that figure is not above
    // defer_below.
    const int64_t unit = int64_t{1} << stamp_shift_;
    room = std::min(room, credit_back_[port].defer_below / unit * unit - p.credits_used);
  }
  return room;
}

inline uint32_t PacketNetworkModel::burst_size(const sim::Engine& engine, const Port& p, uint32_t port,
                                               uint32_t chosen) {
  // Transfers to inject and nothing else to send here (the injection slot just left the ready
  // ring), none capped, and no earlier burst's packets taken back still on the wire.
  if (!bursting_ || !p.ready.empty() || p.capped > 0 || p.mtu_time == Time::max() ||
      engine.now() < p.burst_after) {
    return 0;
  }
  const int64_t mtu = options_.mtu.count();
  // Full packets, no transfer's last among them, each with its credits at hand now.
  const int64_t most = std::min(int64_t{options_.burst}, room_ahead(p, port) / mtu);
  // The packets the port would cut one per serialization, in its turn over its transfers from
  // `chosen`: each a full packet and not its transfer's last, of a transfer past its first packet
  // (transfers that start together at a port, as an all-to-all's do, all join it before that),
  // whose every route goes past this link (so that each packet takes credits and departs as an
  // event).
  const size_t m = p.injecting.size();
  // The loop below reads each transfer's routes record, scattered in memory: asked for at once.
  for (size_t i = 0, at = chosen; i < m && static_cast<int64_t>(i) < most; ++i, at = at + 1 == m ? 0 : at + 1) {
    __builtin_prefetch(&routes_of(p.injecting[at]));
  }
  int64_t n = 0;
  while (n < most) {
    const uint32_t id = p.injecting[(chosen + static_cast<size_t>(n)) % m];
    const Routes& rt = routes_of(id);
    const int64_t before = n / static_cast<int64_t>(m);  // its packets ahead in this burst
    if (rt.cut == 0 || rt.hops < 2 || (rt.unsent - 1) / mtu < before + 1) break;
    ++n;
  }
  return n > 1 ? static_cast<uint32_t>(n) : 0;
}

void PacketNetworkModel::send_burst(sim::Engine& engine, Shard& sh, uint32_t port, Packet& first, uint32_t chosen,
                                    uint32_t n) {
  Port& p = ports_[port];
  const auto mtu = static_cast<uint32_t>(options_.mtu.count());
  const Time s = p.mtu_time;
  // The first starts now, its credits taken; the others n - 1 serializations after it, back to
  // back, their credits counted as they start (settle_burst).
  int64_t used = p.credits_used + mtu;
  p.credits_used = used;
  sh.peak_occupancy = std::max(sh.peak_occupancy, used);
  sh.packets_sent += n;
  p.bytes_sent += int64_t{mtu} * n;
  Time left = engine.now() + s;
  depart(engine, sh, port, first, kNone, left, stamp(used));
  p.burst_from = left;
  p.burst_pending = n - 1;
  p.burst_first = chosen;
  p.burst_count = n;
  p.burst_tag = p.tag;
  const size_t m = p.injecting.size();
  for (uint32_t i = 1; i < n; ++i) {
    const uint32_t id = p.injecting[(chosen + i) % m];
    Routes& rt = routes_of(id);
    Packet pk = new_packet(sh, transfer(id), rt, id, mtu);
    rt.unsent -= mtu;
    used += mtu;
    left += s;
    depart(engine, sh, port, pk, kNone, left, stamp(used));
  }
  p.free_at = left;
  p.inject_next = (chosen + n) % m;
  // One key for the burst's finish, taken after its packets' arrivals: an event of the instant a
  // packet of the burst starts sorts before that packet's start if its key is smaller.
  p.finish_key = engine.take_key();
  ensure_finish(engine, port);
}

inline void PacketNetworkModel::settle_burst(const sim::Engine& engine, Shard& sh, Port& p) {
  const int64_t mtu = options_.mtu.count();
  while (p.burst_pending > 0 &&
         (p.burst_from < engine.now() || (p.burst_from == engine.now() && p.finish_key < engine.key()))) {
    p.credits_used += mtu;
    sh.peak_occupancy = std::max(sh.peak_occupancy, p.credits_used);
    p.burst_from += p.mtu_time;
    --p.burst_pending;
    ++p.burst_tag;
  }
}

inline uint32_t PacketNetworkModel::round_size(const Shard& sh, const Port& p, uint32_t port) const {
  if (p.ready.size() < 2 || p.mtu_time == Time::max()) return 0;
  // The ring's first inputs, each head packet with its credits at hand now.
  const int64_t room = room_ahead(p, port);
  const size_t most = std::min(p.ready.size(), size_t{p.round_most});
  for (size_t k = 0; k < most; ++k) __builtin_prefetch(&sh.packets[p.inputs[p.ready[k]].head]);  // read below
  int64_t need = 0;
  size_t n = 0;
  for (; n < most; ++n) {
    const Packet& head = sh.packets[p.inputs[p.ready[n]].head];
    if (!head.last) {
      need += head.bytes;
      if (need > room) break;
    }
  }
  return static_cast<uint32_t>(n);
}

void PacketNetworkModel::serve_round(sim::Engine& engine, Shard& sh, uint32_t port, uint32_t n) {
  Port& p = ports_[port];
  // The first is served now as try_send would serve it. The others' packets leave their FIFOs
  // now, but their inputs stay at the ring's front, and their bytes in the queue, until they
  // settle (a packet that reaches such an input's empty FIFO meanwhile does not join the ring:
  // enqueue).
  int64_t used = p.credits_used;
  Time at = engine.now();
  // depart reads the routes of each packet on its last link, scattered in memory: asked for at once
  // (the ring as it stands before the loop below takes its first input off).
  for (uint32_t i = 0; i < n; ++i) {
    const Packet& pk = sh.packets[p.inputs[p.ready[i]].head];
    if (pk.last) __builtin_prefetch(&routes_of(pk.transfer));
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t slot = p.ready[i == 0 ? 0 : i - 1];
    InputQueue& q = p.inputs[slot];
    const uint32_t packet = q.head;
    Packet& pk = sh.packets[packet];
    const uint32_t bytes = pk.bytes;
    const uint32_t over = pk.over;
    const bool credited = !pk.last;
    if (credited) used += bytes;
    const Time left = at + serialization(p, bytes);
    q.head = pk.next;
    if (q.head == kNone) q.tail = kNone;
    if (i == 0) {
      change_queue(sh, port, at, -int64_t{bytes});
      p.ready.erase(0);
      if (q.head != kNone) p.ready.push_back(slot);
      p.credits_used = used;
      sh.peak_occupancy = std::max(sh.peak_occupancy, used);
      p.round_next = left;
    } else {
      p.members[n - 1 - i].word = bytes | (credited ? RoundMember::kCredited : 0);
    }
    p.bytes_sent += bytes;
    depart(engine, sh, port, pk, packet, left, stamp(used));
    if (over != kNone) return_credits(engine, over, bytes, left);
    at = left;
  }
  sh.packets_sent += n;
  p.round_pending = n - 1;
  p.free_at = at;
  p.finish_key = engine.take_key();
  ensure_finish(engine, port);
}

inline void PacketNetworkModel::settle_round(const sim::Engine& engine, Shard& sh, uint32_t port) {
  Port& p = ports_[port];
  // Due at this instant: started if its finish would have sorted before this event (any key of
  // this port's site does as well as that finish's: the event is from another site).
  while (p.round_pending > 0 &&
         (p.round_next < engine.now() || (p.round_next == engine.now() && p.finish_key < engine.key()))) {
    // What try_send did at this packet's start: its input leaves the ring's front (and goes to
    // the back while it has packets), its bytes the queue, and it takes its credits.
    const RoundMember m = p.members[p.round_pending - 1];
    const uint32_t slot = p.ready[0];
    p.ready.erase(0);
    if (p.inputs[slot].head != kNone) p.ready.push_back(slot);
    change_queue(sh, port, p.round_next, -int64_t{m.bytes()});
    if (m.credited()) {
      p.credits_used += m.bytes();
      sh.peak_occupancy = std::max(sh.peak_occupancy, p.credits_used);
    }
    p.round_next += serialization(p, m.bytes());
    --p.round_pending;
  }
}

void PacketNetworkModel::take_back(sim::Engine& engine, Shard& sh, uint32_t port) {
  Port& p = ports_[port];
  settle_burst(engine, sh, p);
  const uint32_t n = p.burst_pending;
  if (n == 0) return;
  const int64_t mtu = options_.mtu.count();
  const int64_t bytes = mtu * n;
  // The last n of the burst's packets, each its transfer's last cut, undone from the last; the
  // port's turn goes back to the first of them.
  const size_t m = p.injecting.size();
  for (uint32_t i = p.burst_count; i-- > p.burst_count - n;) {
    Routes& rt = routes_of(p.injecting[(p.burst_first + i) % m]);
    rt.unsent += mtu;
    --rt.cut;
  }
  p.inject_next = (p.burst_first + p.burst_count - n) % m;
  ++sh.taken_back;
  sh.injected -= n;
  sh.packets_sent -= n;
  p.bytes_sent -= bytes;
  // Their arrivals are queued up to a latency after the burst's end; the far end drops them.
  p.burst_after = p.free_at + p.latency;
  p.free_at = p.burst_from;
  p.burst_pending = 0;
  // The finish queued for the burst's end is stale: try_send queues one for the new end.
  p.finish_gen = (p.finish_gen + 1) & kGenerationMask;
  p.finish_pending = false;
  engine.schedule_at_site(engine.now() + p.latency, p.far, *this, event(kTakeBack, port),
                          uint32_t{p.burst_tag} | (n << 16));
}

inline bool PacketNetworkModel::taken_back(uint32_t link, uint32_t tag) {
  TakenBack& t = taken_back_[link];
  if (t.left == 0 || static_cast<uint16_t>(tag - t.first) >= t.count) return false;
  if (--t.left == 0) t.count = 0;
  return true;
}

void PacketNetworkModel::on_event(sim::Engine& engine, uint64_t payload) {
  const uint64_t fields = payload & kFieldMask;
  const auto id = static_cast<uint32_t>(fields);
  // What the next event will read first, scattered over memory (routes of thousands of transfers
  // in an all-to-all): asked for now, so that it arrives while this event runs.
  if (const sim::Event* next = engine.upcoming(); next != nullptr && next->handler == this) {
    const uint64_t kind = next->payload >> kKindShift;
    const auto next_id = static_cast<uint32_t>(next->payload);
    if (kind == kArrive) {
      __builtin_prefetch(&routes_of(next_id));
    } else if (kind == kFinish || kind == kCredit) {
      __builtin_prefetch(&ports_[next_id]);
    }
  }
  // The kinds of every packet hop, each a tail call, so that this frame saves no register.
  switch (payload >> kKindShift) {
    case kFinish: return on_finish(engine, id, fields);
    case kArrive: return arrive(engine, fields);
    case kCredit: return on_credit(engine, id);
    default: return on_rare_event(engine, payload);
  }
}

void PacketNetworkModel::on_finish(sim::Engine& engine, uint32_t port, uint64_t fields) {
  if (!eager_) return finish_transmit(engine, port);
  Port& p = ports_[port];
  if ((fields >> 32) != p.finish_gen) return;  // its burst's later packets were taken back
  p.finish_pending = false;
  if (p.burst_pending != 0) settle_burst(engine, shard(engine), p);
  try_send(engine, port);
}

void PacketNetworkModel::on_credit(sim::Engine& engine, uint32_t port) {
  Port& p = ports_[port];
  if (p.burst_pending != 0) settle_burst(engine, shard(engine), p);
  if (p.round_pending != 0) settle_round(engine, shard(engine), port);
  p.credits_used -= engine.aux();
  try_send(engine, port);
}

void PacketNetworkModel::on_rare_event(sim::Engine& engine, uint64_t payload) {
  const uint64_t fields = payload & kFieldMask;
  const auto id = static_cast<uint32_t>(fields);
  switch (payload >> kKindShift) {
    case kWake:
      if (ports_[id].wake_at == engine.now()) ports_[id].wake_at = Time::max();
      try_send(engine, id);
      return;
    case kCnpArrive: {
      Packet cnp = decode(fields, engine.aux());
      cnp.cnp = true;
      arrive_cnp(engine, cnp, stamp_of(fields));
      return;
    }
    case kAck: {
      if (options_.flow_control == FlowControl::lossy) {
        // Packets sent again may still be on their way to the receiver: the record stays.
        transfer(id).finished = true;
        return;
      }
      // Every packet has arrived: the sender's slot is free once the CNPs sent for it are back too.
      TransferState& ts = transfer(id);
      ts.cnps_awaited = engine.aux();
      if (ts.cnps_back == ts.cnps_awaited) release(id);
      return;
    }
    case kPause: {
      Port& p = ports_[id];
      p.paused = true;
      p.paused_since = engine.now();
      ++p.pause_frames;
      if (options_.sample_interval > Time::zero()) p.pauses.push_back({engine.now(), Time::max()});
      return;
    }
    case kResume: {
      Port& p = ports_[id];
      p.paused = false;
      const int64_t paused = (engine.now() - p.paused_since).ps();
      shard(engine).paused_ps += paused;
      p.paused_ps += paused;
      if (!p.pauses.empty()) p.pauses.back().to = engine.now();
      try_send(engine, id);
      return;
    }
    case kNak: go_back(engine, id, fields >> 32); return;
    case kTakeBack: {
      TakenBack& t = taken_back_[id];
      if (t.left != 0) throw std::logic_error("packet model: a burst taken back before the last one's packets came");
      t.first = static_cast<uint16_t>(engine.aux());
      t.count = t.left = static_cast<uint16_t>(engine.aux() >> 16);
      return;
    }
    case kWindowAck: {
      TransferState& ts = transfer(id);
      // A late ACK of a transfer acknowledged whole (its slot maybe reused) changes nothing.
      if ((ts.generation & kGenerationMask) != (fields >> 32)) return;
      take_ack(shard(engine), ts.window, engine.aux() & ~kEce, (engine.aux() & kEce) != 0);
      try_send(engine, first_link(id));
      return;
    }
    case kRto: {
      TransferState& ts = transfer(id);
      if (ts.finished || ts.rto_at != engine.now()) return;  // completed, or the timer was set again
      ts.rto_at = Time::max();
      ++shard(engine).timeouts;
      go_back(engine, id, ts.acked);
      return;
    }
    default: throw std::logic_error("packet model: an event of no kind");
  }
}

void PacketNetworkModel::finish_transmit(sim::Engine& engine, uint32_t port) {
  Shard& sh = shard(engine);
  Port& p = ports_[port];
  const uint32_t packet = p.on_wire;
  Packet& pk = sh.packets[packet];
  p.busy = false;
  p.on_wire = kNone;
  p.bytes_sent += pk.bytes;
  // The packet has left the receive buffer of the link it came over (its last byte is out, as
  // store-and-forward frees it): the credits go back to that link's port, or with PFC the ingress
  // queue drains. An injected packet waited in host memory and took none.
  const uint32_t over = pk.over;
  const int64_t bytes = pk.bytes;
  depart(engine, sh, port, pk, packet, engine.now(), 0);
  try_send(engine, port);
  if (over == kNone) return;
  if (options_.flow_control != FlowControl::credits) {
    drain_ingress(engine, over, bytes);
  } else if (!pool_of_.empty() && pool_of_[over] != kNone) {
    release_shared(engine, over, bytes);
  } else {
    return_credits(engine, over, bytes, engine.now());
  }
}

void PacketNetworkModel::fill_ingress(sim::Engine& engine, Shard& sh, uint32_t link, int64_t bytes) {
  IngressQueue& q = ingress_[link];
  q.bytes += bytes;
  sh.peak_ingress = std::max(sh.peak_ingress, q.bytes);
  q.peak = std::max(q.peak, q.bytes);
  const bool pooled = !pool_of_.empty() && pool_of_[link] != kNone;
  if (pooled) fill_pool(pools_[pool_of_[link]], bytes);
  if (options_.flow_control != FlowControl::pfc || q.pausing) return;
  // Shared: Xoff is the dynamic threshold, with what this packet took from the pool counted.
  if (pooled ? static_cast<double>(q.bytes) <= threshold(pools_[pool_of_[link]]) : q.bytes <= q.xoff) return;
  q.pausing = true;
  ++sh.pause_frames;
  engine.schedule_at_site(engine.now() + q.back, ports_[link].site, *this, event(kPause, link));
}

bool PacketNetworkModel::admits(uint32_t link, int64_t bytes) const {
  const IngressQueue& q = ingress_[link];
  if (pool_of_.empty() || pool_of_[link] == kNone) return q.bytes + bytes <= options_.buffer_per_port.count();
  const SharedPool& pool = pools_[pool_of_[link]];
  return static_cast<double>(q.bytes) < threshold(pool) && pool.used + bytes <= pool.size;
}

void PacketNetworkModel::drain_ingress(sim::Engine& engine, uint32_t link, int64_t bytes) {
  IngressQueue& q = ingress_[link];
  q.bytes -= bytes;
  const bool pooled = !pool_of_.empty() && pool_of_[link] != kNone;
  if (pooled) pools_[pool_of_[link]].used -= bytes;
  // Shared: Xon is two packets below the threshold now (an empty queue always resumes).
  const int64_t xon =
      pooled ? std::max<int64_t>(0, static_cast<int64_t>(std::floor(threshold(pools_[pool_of_[link]]))) -
                                        2 * options_.mtu.count())
             : q.xon;
  if (!q.pausing || q.bytes > xon) return;
  q.pausing = false;
  // The same trip as the PAUSE's, sent later by the same device: it arrives after it.
  engine.schedule_at_site(engine.now() + q.back, ports_[link].site, *this, event(kResume, link));
}

inline void PacketNetworkModel::return_credits(sim::Engine& engine, uint32_t link, int64_t bytes, Time freed) {
  if (credit_back_.empty()) {
    engine.schedule_at_site(freed + ports_[link ^ 1].latency, ports_[link].site, *this, event(kCredit, link),
                            static_cast<uint32_t>(bytes));
    return;
  }
  CreditReturn& c = credit_back_[link];
  c.deferred += bytes;
  c.freed_by = std::max(c.freed_by, freed);
  if (c.port_used <= c.defer_below && c.deferred < options_.credit_batch.count()) return;
  flush_credits(engine, link);
}

void PacketNetworkModel::flush_credits(sim::Engine& engine, uint32_t link) {
  CreditReturn& c = credit_back_[link];
  engine.schedule_at_site(std::max(engine.now(), c.freed_by) + ports_[link ^ 1].latency, ports_[link].site, *this,
                          event(kCredit, link), static_cast<uint32_t>(c.deferred));
  c.deferred = 0;
}

inline void PacketNetworkModel::depart(sim::Engine& engine, Shard& sh, uint32_t link, Packet& pk, uint32_t packet,
                                       Time left, uint64_t stamp) {
  if (pk.cnp) {
    engine.schedule_at_site(left + ports_[link].latency, ports_[link].far, *this,
                            event(kCnpArrive, encode(pk, stamp)), aux_of(pk) | next_tag(link));
    if (packet != kNone) free_packet(sh, packet);
    return;
  }
  // On its last link, bound for a GPU that never backpressures, a packet's arrival matters only
  // if it sends a CNP or completes the transfer. When every route of the transfer ends on this
  // link, its packets arrive in the order they leave on it, so the last to leave completes the
  // transfer: any other that sends no CNP is counted delivered now, with no event.
  // A DCTCP receiver acknowledges every packet: each arrives as an event.
  if (pk.last && options_.flow_control != FlowControl::lossy) {
    Routes& rt = routes_of(pk.transfer);
    if (rt.one_last_link) {
      pk.completes = --rt.to_leave == 0;
      if (!pk.completes && !pk.marked && !rt.windowed) {
        sh.delivered += pk.bytes;
        ++sh.landed;
        if (packet != kNone) free_packet(sh, packet);
        return;
      }
    }
  }
  // The packet travels as its arrival event; the device it reaches holds it next.
  engine.schedule_at_site(left + ports_[link].latency, ports_[link].far, *this,
                          event(kArrive, encode(pk, stamp)), aux_of(pk) | next_tag(link));
  if (packet != kNone) free_packet(sh, packet);
}

void PacketNetworkModel::arrive(sim::Engine& engine, uint64_t fields) {
  // The fields a hop reads first; the whole packet (decode) only past pass_last.
  const uint64_t stamp = stamp_of(fields);
  Shard& sh = shard(engine);
  const uint32_t id = transfer_of(fields);
  Routes& rt = routes_of(id);
  const size_t route = route_of(fields);
  const size_t at = hop_of(fields);
  const topology::LinkId over = link_at(rt, id, route, at);
  if (bursting_ && at == 0 && taken_back(over, engine.aux() >> 16)) return;
  const size_t hop = at + 1;
  const size_t length = route_length(rt, id, route);
  if (hop < length) {
    const uint32_t port = link_at(rt, id, route, hop);
    if (passing_ && hop + 1 == length && pass_last(engine, sh, rt, bytes_of(engine.aux()), over, port, stamp)) {
      return;
    }
    Packet pk = decode(fields, engine.aux());
    pk.hop = static_cast<uint8_t>(hop);
    pk.last = hop + 1 == length;
    pk.over = over;
    if (!take_in(engine, sh, pk, over, port, stamp)) return;
    if (marking_ && !pk.marked && marks_[port]) {
      const bool dctcp_mark = options_.dctcp.enabled && ports_[port].queued > options_.dctcp.k.count();
      if ((options_.dcqcn.enabled && mark(port)) || dctcp_mark) {
        pk.marked = true;
        ++sh.ecn_marks;
        ++ports_[port].marked;
      }
    }
    forward(engine, sh, port, over, pk);
    return;
  }
  TransferState& ts = transfer(id);
  const Packet arrived = decode(fields, engine.aux());
  if (arrived.marked && options_.dcqcn.enabled) notify(engine, sh, arrived);
  if (rt.windowed) acknowledge(engine, arrived);
  if (options_.flow_control == FlowControl::lossy) {
    receive_in_order(engine, sh, arrived);
    return;
  }
  // With one last link, its port marked the last packet to leave on it, which arrives last;
  // otherwise the receiver counts every packet.
  const bool complete = rt.one_last_link ? arrived.completes : ++ts.received == ts.packets;
  sh.delivered += arrived.bytes;
  ++sh.landed;
  if (!complete) return;
  ++sh.completed;
  engine.schedule_in(Time::zero(), *ts.done, ts.payload);
  // The acknowledgement frees the sender's slot, a reverse route's latency from now.
  engine.schedule_at_site(engine.now() + ts.back, ports_[link_at(rt, id, route, 0)].site, *this,
                          event(kAck, arrived.transfer), ts.cnps_sent);
}

void PacketNetworkModel::arrive_cnp(sim::Engine& engine, const Packet& arrived, uint64_t stamp) {
  Shard& sh = shard(engine);
  TransferState& ts = transfer(arrived.transfer);
  if (arrived.hop == 0) {  // back at the sender
    ++sh.landed;
    ++sh.cnps;
    // A CNP that comes back after the acknowledgement finds nothing left to slow down.
    if (ts.cnps_awaited == UINT32_MAX) take_cnp(engine.now(), ts.rp);
    if (++ts.cnps_back == ts.cnps_awaited) release(arrived.transfer);
    return;
  }
  const uint32_t over = link_of(arrived);
  const uint32_t port = link_at(routes_of(arrived.transfer), arrived.transfer, arrived.route, arrived.hop - 1U) ^ 1;
  Packet pk = arrived;
  pk.hop = static_cast<uint8_t>(arrived.hop - 1);
  pk.last = arrived.hop == 1;
  pk.over = over;
  if (take_in(engine, sh, pk, over, port, stamp)) forward(engine, sh, port, over, pk);
}

inline void PacketNetworkModel::note_stamp(sim::Engine& engine, uint32_t over, uint64_t stamp) {
  if (credit_back_.empty()) return;
  // What over's port had in use when it sent this packet: credits held back go now if the
  // port may come near its limit before the next chance to send them.
  CreditReturn& c = credit_back_[over];
  c.port_used = static_cast<int64_t>(stamp) << stamp_shift_;
  if (c.deferred > 0 && c.port_used > c.defer_below) flush_credits(engine, over);
}

inline bool PacketNetworkModel::pass_last(sim::Engine& engine, Shard& sh, Routes& rt, uint32_t bytes,
                                          uint32_t over, uint32_t port, uint64_t stamp) {
  Port& p = ports_[port];
  // Full packets only (a shorter one is its transfer's last cut, a candidate to complete it), and
  // not the last to leave on the transfer's one last link (its arrival completes the transfer).
  if (bytes != options_.mtu.count() || !rt.one_last_link || rt.to_leave == 1 || !p.ready.empty() ||
      p.paused || p.burst_pending != 0 || engine.now() < p.free_at || p.mtu_time == Time::max()) {
    return false;
  }
  note_stamp(engine, over, stamp);
  // It joins the port's queue and leaves it at this instant (change_queue, then forward's
  // subtraction): sampled before, and peaked with its bytes.
  sample_before(port, engine.now());
  const int64_t queued = p.queued + bytes;
  p.peak_queued = std::max(p.peak_queued, queued);
  sh.peak_queued = std::max(sh.peak_queued, queued);
  // begin and send_now for a packet bound for a GPU (no credits), then depart on the last link.
  ++sh.packets_sent;
  const Time left = engine.now() + p.mtu_time;
  p.free_at = left;
  p.finish_key = engine.take_key();
  p.bytes_sent += bytes;
  --rt.to_leave;
  sh.delivered += bytes;
  ++sh.landed;
  return_credits(engine, over, bytes, left);
  return true;
}

inline bool PacketNetworkModel::take_in(sim::Engine& engine, Shard& sh, const Packet& pk, uint32_t over, uint32_t port,
                                        uint64_t stamp) {
  note_stamp(engine, over, stamp);
  if (ports_[port].round_pending != 0) settle_round(engine, sh, port);
  // Lossy: a packet that finds the buffer of the link it came over full is dropped; in a shared
  // switch buffer, one that finds its queue at or above the threshold or the pool full.
  if (options_.flow_control == FlowControl::lossy && !admits(over, pk.bytes)) {
    ++sh.drops;
    ++ingress_[over].drops;
    ++sh.landed;
    return false;
  }
  change_queue(sh, port, engine.now(), pk.bytes);
  if (options_.flow_control != FlowControl::credits) fill_ingress(engine, sh, over, pk.bytes);
  return true;
}

inline void PacketNetworkModel::forward(sim::Engine& engine, Shard& sh, uint32_t port, uint32_t over, Packet& pk) {
  Port& p = ports_[port];
  if (p.burst_pending != 0) take_back(engine, sh, port);
  if (eager_ && p.ready.empty() && !p.paused && engine.now() >= p.free_at) {
    // An idle port with nothing queued sends the packet at once if its credits allow, as
    // try_send would serve it from its input (no other input to take a turn before it).
    const bool credited = !pk.last;
    if (!credited || p.credits_used + pk.bytes <= p.credit_limit) {
      // It leaves the queue it joined at this instant (every caller counted it there just
      // before): sampled and peaked then, so change_queue would find nothing more to note.
      p.queued -= pk.bytes;
      begin(engine, sh, port, pk, kNone, credited);
      return;
    }
  }
  const uint32_t packet = take_packet(sh);
  sh.packets[packet] = pk;
  ensure_inputs(port);
  enqueue(sh, port, in_index_[over], packet);
  try_send(engine, port);
}

void PacketNetworkModel::receive_in_order(sim::Engine& engine, Shard& sh, const Packet& arrived) {
  TransferState& ts = transfer(arrived.transfer);
  ++sh.landed;
  const uint64_t seq = arrived.seq;
  const bool new_round = seq <= ts.last_seq;  // the sender has gone back since the last arrival
  ts.last_seq = seq;
  if (seq == ts.received) {
    ++ts.received;
    ts.nak_pending = false;
    sh.delivered += arrived.bytes;
    if (ts.received < ts.packets) return;
    ++sh.completed;
    engine.schedule_in(Time::zero(), *ts.done, ts.payload);
    engine.schedule_at_site(engine.now() + ts.back, ports_[first_link(arrived.transfer)].site, *this,
                            event(kAck, arrived.transfer));
    return;
  }
  // A gap (go-back-N discards what follows it), or a packet sent again after it had arrived: the
  // NAK says where the sender is to go on from, once a round of the sender's.
  if (ts.nak_pending && !new_round) return;
  ts.nak_pending = true;
  ++sh.naks;
  engine.schedule_at_site(engine.now() + ts.back, ports_[first_link(arrived.transfer)].site, *this,
                          event(kNak, (ts.received << 32) | arrived.transfer));
}

void PacketNetworkModel::go_back(sim::Engine& engine, uint32_t transfer_id, uint64_t seq) {
  TransferState& ts = transfer(transfer_id);
  Routes& rt = routes_of(transfer_id);
  // Completed, a NAK older than one taken, or the next packet it cuts anyway.
  if (ts.finished || seq < ts.acked || seq == rt.cut) return;
  ts.acked = seq;
  const uint32_t first = first_link(transfer_id);
  Port& p = ports_[first];
  if (rt.unsent == 0) {  // it had cut its last packet: it injects again
    if (p.injecting.empty()) p.ready.push_back(injection_slot(p));
    p.injecting.push_back(transfer_id);
    if (ts.cap > 0) ++p.capped;
  }
  rt.cut = seq;
  rt.unsent = ts.total - static_cast<int64_t>(seq) * options_.mtu.count();
  ts.rto_at = Time::max();  // set again when the last packet leaves again
  if (seq == ts.went_back_to) {
    ts.backoff = std::min(ts.backoff == Time::zero() ? ts.back * 2 : ts.backoff * 2, Time::s(1));
    ts.rp.next_send = std::max(ts.rp.next_send, engine.now() + ts.backoff);
  } else {
    ts.backoff = Time::zero();
  }
  ts.went_back_to = seq;
  try_send(engine, first);
}

uint32_t PacketNetworkModel::next_injector(const Port& p, Time now, Time& ready_at) {
  const size_t n = p.injecting.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (p.inject_next + i) % n;
    const TransferState& ts = transfer(p.injecting[k]);
    const Routes& rt = routes_of(p.injecting[k]);
    // A sender whose window is full waits for an ACK, which tries the port again.
    const int64_t next_bytes = std::min(rt.unsent, options_.mtu.count());
    if (options_.dctcp.enabled && rt.windowed &&
        static_cast<double>(ts.window.in_flight + next_bytes) > ts.window.cwnd) {
      continue;
    }
    const Time at = ts.rp.next_send;
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

void PacketNetworkModel::notify(sim::Engine& engine, Shard& sh, const Packet& marked) {
  TransferState& ts = transfer(marked.transfer);
  const Time now = engine.now();
  if (ts.last_cnp_sent != Time::max() && now - ts.last_cnp_sent < options_.dcqcn.cnp_interval) return;
  ts.last_cnp_sent = now;
  ++ts.cnps_sent;
  // The CNP leaves the receiver over the reverse of the link the marked packet came in on and
  // takes its route back, queued behind whatever waits at each port.
  const Routes& rt = routes_of(marked.transfer);
  const size_t length = route_length(rt, marked.transfer, marked.route);
  Packet cnp{.transfer = marked.transfer,
             .bytes = static_cast<uint32_t>(kCnpBytes.count()),
             .next = kNone,
             .hop = static_cast<uint8_t>(length - 1),
             .route = marked.route,
             .cnp = true,
             .last = length == 1,
             .over = kNone};
  ++sh.injected;
  const uint32_t last = link_at(rt, marked.transfer, marked.route, length - 1);
  const uint32_t port = last ^ 1;
  change_queue(sh, port, now, kCnpBytes.count());
  forward(engine, sh, port, last, cnp);
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

void PacketNetworkModel::acknowledge(sim::Engine& engine, const Packet& arrived) {
  const TransferState& ts = transfer(arrived.transfer);
  const uint64_t fields = (uint64_t{ts.generation & kGenerationMask} << 32) | arrived.transfer;
  engine.schedule_at_site(engine.now() + ts.back, ports_[first_link(arrived.transfer)].site, *this,
                          event(kWindowAck, fields), arrived.bytes | (arrived.marked ? kEce : 0));
}

void PacketNetworkModel::take_ack(Shard& sh, Window& w, int64_t bytes, bool ece) const {
  const DctcpOptions& d = options_.dctcp;
  const auto mss = static_cast<double>(options_.mtu.count());
  w.in_flight -= bytes;
  w.acked += bytes;
  w.window_acked += bytes;
  if (ece) w.window_marked += bytes;
  // A window of data has been acknowledged: alpha takes its fraction of marked bytes.
  if (w.acked >= w.window_end) {
    const double marked = static_cast<double>(w.window_marked) / static_cast<double>(w.window_acked);
    w.alpha = (1 - d.g) * w.alpha + d.g * marked;
    w.window_acked = 0;
    w.window_marked = 0;
    w.window_end = w.sent;
  }
  // The cut of the last mark lasts until the data in flight then is acknowledged: one a window.
  if (w.acked <= w.cut_until) return;
  if (ece) {
    w.cwnd = std::max(mss, w.cwnd * (1 - w.alpha / 2));
    w.slow_start = false;
    w.cut_until = w.sent;
    ++sh.window_cuts;
  } else {
    w.cwnd += w.slow_start ? static_cast<double>(bytes) : mss * static_cast<double>(bytes) / w.cwnd;
  }
}

}  // namespace dtsim::network
