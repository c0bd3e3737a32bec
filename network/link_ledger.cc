#include "network/link_ledger.h"

#include <algorithm>

namespace dtsim::network {

LinkLedger::LinkLedger(const topology::Cluster& cluster, NetworkModel& inner)
    : cluster_(cluster),
      inner_(inner),
      bytes_(cluster.links().size(), 0),
      active_(cluster.links().size(), 0),
      busy_since_(cluster.links().size(), 0),
      busy_ps_(cluster.links().size(), 0) {}

void LinkLedger::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) {
  const std::vector<std::vector<topology::LinkId>> paths = transfer_paths(cluster_, t);
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
  f.links.clear();
  for (size_t i = 0; i < paths.size(); ++i) {
    const int64_t share = spray_share(t.bytes, i, paths.size()).count();
    for (topology::LinkId l : paths[i]) {
      bytes_[l] += share;
      f.links.push_back(l);
    }
  }
  // A link on several sprayed routes counts once.
  std::sort(f.links.begin(), f.links.end());
  f.links.erase(std::unique(f.links.begin(), f.links.end()), f.links.end());
  for (topology::LinkId l : f.links) {
    if (active_[l]++ == 0) busy_since_[l] = engine.now().ps();
  }
  inner_.start(engine, t, *this, slot);
}

void LinkLedger::on_event(sim::Engine& engine, uint64_t slot) {
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

std::vector<LinkLoad> LinkLedger::loads(Time elapsed) const {
  std::vector<LinkLoad> out;
  for (topology::LinkId l = 0; l < bytes_.size(); ++l) {
    if (bytes_[l] == 0) continue;
    const topology::Link& link = cluster_.link(l);
    LinkLoad load;
    load.link = l;
    load.name = cluster_.link_name(l);
    load.kind = link.kind;
    load.bandwidth = link.bandwidth;
    load.bytes = Bytes(bytes_[l]);
    load.busy = Time::ps(busy_ps_[l]);
    const double capacity = link.bandwidth.bytes_per_s() * elapsed.seconds();
    load.utilisation = capacity > 0 ? static_cast<double>(bytes_[l]) / capacity : 0;
    load.port = inner_.port_stats(l);
    out.push_back(std::move(load));
  }
  return out;
}

void LinkLedger::clear() {
  std::fill(bytes_.begin(), bytes_.end(), 0);
  std::fill(busy_ps_.begin(), busy_ps_.end(), 0);
}

}  // namespace dtsim::network
