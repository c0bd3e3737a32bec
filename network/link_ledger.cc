#include "network/link_ledger.h"

#include <algorithm>

namespace dtsim::network {

LinkLedger::LinkLedger(const topology::Cluster& cluster, NetworkModel& inner)
    : cluster_(cluster), inner_(inner), bytes_(cluster.links().size(), 0) {}

void LinkLedger::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done, uint64_t payload) {
  const std::vector<std::vector<topology::LinkId>> paths = transfer_paths(cluster_, t);
  for (size_t i = 0; i < paths.size(); ++i) {
    const int64_t share = spray_share(t.bytes, i, paths.size()).count();
    for (topology::LinkId l : paths[i]) bytes_[l] += share;
  }
  inner_.start(engine, t, done, payload);
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
    const double capacity = link.bandwidth.bytes_per_s() * elapsed.seconds();
    load.utilisation = capacity > 0 ? static_cast<double>(bytes_[l]) / capacity : 0;
    out.push_back(std::move(load));
  }
  return out;
}

void LinkLedger::clear() { std::fill(bytes_.begin(), bytes_.end(), 0); }

}  // namespace dtsim::network
