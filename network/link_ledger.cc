#include "network/link_ledger.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace dtsim::network {

LinkLedger::LinkLedger(const topology::Cluster& cluster, NetworkModel& inner)
    : cluster_(cluster),
      inner_(inner),
      bytes_(cluster.links().size(), 0),
      active_(cluster.links().size(), 0),
      busy_since_(cluster.links().size(), 0),
      busy_ps_(cluster.links().size(), 0) {}

void LinkLedger::set_partitions(uint32_t partitions) {
  if (!in_flight_.empty() || !shards_.empty()) {
    throw std::logic_error("link ledger: set_partitions after a transfer started");
  }
  if (partitions <= 1) return;
  shards_ = std::vector<Shard>(partitions);
  for (Shard& sh : shards_) sh.bytes.assign(cluster_.links().size(), 0);
}

std::vector<topology::LinkId> LinkLedger::add_bytes(const Transfer& t, std::vector<int64_t>& bytes) const {
  const std::vector<std::vector<topology::LinkId>> paths = transfer_paths(cluster_, t);
  std::vector<topology::LinkId> links;
  for (size_t i = 0; i < paths.size(); ++i) {
    const int64_t share = spray_share(t.bytes, i, paths.size()).count();
    for (topology::LinkId l : paths[i]) {
      bytes[l] += share;
      links.push_back(l);
    }
  }
  // A link on several sprayed routes counts once.
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

void LinkLedger::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) {
  if (!shards_.empty()) {
    Shard& sh = shards_.at(engine.partition());
    const uint32_t slot = sh.started.take();
    Started& s = sh.started[slot];
    s.done = &done;
    s.payload = payload;
    s.start_ps = engine.now().ps();
    s.links = add_bytes(t, sh.bytes);
    inner_.start(engine, t, *this, (uint64_t{engine.partition()} << 32) | slot);
    return;
  }
  uint64_t slot;
  if (free_.empty()) {
    slot = in_flight_.size();
    in_flight_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  InFlight& f = in_flight_[slot];
  f.done = &done;
  f.payload = payload;
  f.links = add_bytes(t, bytes_);
  for (topology::LinkId l : f.links) {
    if (active_[l]++ == 0) busy_since_[l] = engine.now().ps();
  }
  inner_.start(engine, t, *this, slot);
}

void LinkLedger::on_event(sim::Engine& engine, uint64_t slot) {
  if (!shards_.empty()) {
    // The sender's record, written before the transfer started and only read from here on.
    const Started& s = shards_[slot >> 32].started[static_cast<uint32_t>(slot)];
    shards_.at(engine.partition()).completions.push_back({slot, engine.now().ps()});
    s.done->on_event(engine, s.payload);
    return;
  }
  InFlight& f = in_flight_[slot];
  for (topology::LinkId l : f.links) {
    if (--active_[l] == 0) busy_ps_[l] += engine.now().ps() - busy_since_[l];
  }
  sim::EventHandler* done = f.done;
  const uint64_t payload = f.payload;
  f.done = nullptr;
  free_.push_back(slot);
  done->on_event(engine, payload);
}

std::vector<int64_t> LinkLedger::busy_from_shards() const {
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();  // not complete
  // Every started transfer's interval on each of its links: (link, start, end).
  std::vector<std::tuple<topology::LinkId, int64_t, int64_t>> spans;
  std::vector<std::vector<int64_t>> ends(shards_.size());
  for (size_t p = 0; p < shards_.size(); ++p) {
    // StablePool hands out slots 0, 1, ... and none is given back during a run.
    ends[p].assign(shards_[p].started.in_use(), kOpen);
  }
  for (const Shard& sh : shards_) {
    for (const Completion& c : sh.completions) ends[c.id >> 32][static_cast<uint32_t>(c.id)] = c.end_ps;
  }
  for (size_t p = 0; p < shards_.size(); ++p) {
    for (uint32_t slot = 0; slot < ends[p].size(); ++slot) {
      const Started& s = shards_[p].started[slot];
      for (topology::LinkId l : s.links) spans.emplace_back(l, s.start_ps, ends[p][slot]);
    }
  }
  std::sort(spans.begin(), spans.end());
  // The union of each link's intervals; a stretch that never closes (a transfer still in flight)
  // adds nothing, as the serial count adds a link's time only when it goes idle.
  std::vector<int64_t> busy(cluster_.links().size(), 0);
  for (size_t i = 0; i < spans.size();) {
    const topology::LinkId l = std::get<0>(spans[i]);
    int64_t from = std::get<1>(spans[i]);
    int64_t to = std::get<2>(spans[i]);
    for (++i; i < spans.size() && std::get<0>(spans[i]) == l; ++i) {
      const auto [link, start, end] = spans[i];
      if (start > to) {
        busy[l] += to - from;
        from = start;
      }
      to = std::max(to, end);
    }
    if (to != kOpen) busy[l] += to - from;
  }
  return busy;
}

std::vector<LinkLoad> LinkLedger::loads(Time elapsed) const {
  std::vector<int64_t> bytes = bytes_;
  std::vector<int64_t> busy = busy_ps_;
  if (!shards_.empty()) {
    for (const Shard& sh : shards_) {
      for (size_t l = 0; l < bytes.size(); ++l) bytes[l] += sh.bytes[l];
    }
    busy = busy_from_shards();
  }
  std::vector<LinkLoad> out;
  for (topology::LinkId l = 0; l < bytes.size(); ++l) {
    if (bytes[l] == 0) continue;
    const topology::Link& link = cluster_.link(l);
    LinkLoad load;
    load.link = l;
    load.name = cluster_.link_name(l);
    load.kind = link.kind;
    load.bandwidth = link.bandwidth;
    load.bytes = Bytes(bytes[l]);
    load.busy = Time::ps(busy[l]);
    const double capacity = link.bandwidth.bytes_per_s() * elapsed.seconds();
    load.utilisation = capacity > 0 ? static_cast<double>(bytes[l]) / capacity : 0;
    load.port = inner_.port_stats(l);
    out.push_back(std::move(load));
  }
  return out;
}

void LinkLedger::clear() {
  std::fill(bytes_.begin(), bytes_.end(), 0);
  std::fill(busy_ps_.begin(), busy_ps_.end(), 0);
  if (shards_.empty()) return;
  size_t started = 0;
  size_t completed = 0;
  for (const Shard& sh : shards_) {
    started += sh.started.in_use();
    completed += sh.completions.size();
  }
  if (started != completed) throw std::logic_error("link ledger: clear() on partitions with transfers in flight");
  for (Shard& sh : shards_) {
    std::fill(sh.bytes.begin(), sh.bytes.end(), 0);
    sh.started = sim::StablePool<Started>();
    sh.completions.clear();
  }
}

}  // namespace dtsim::network
