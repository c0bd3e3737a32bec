#include "network/analytical/analytical_network.h"

#include <limits>

namespace dtsim::network {

AnalyticalNetwork::PathFigures AnalyticalNetwork::path(const Transfer& t) const {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(t.src_gpu)) << 40) ^
                       (static_cast<uint64_t>(static_cast<uint32_t>(t.dst_gpu)) << 16) ^
                       (t.flow_hash & 0xffff);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  PathFigures f;
  f.bottleneck = Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
  for (topology::LinkId l : cluster_.route(t.src_gpu, t.dst_gpu, t.flow_hash & 0xffff)) {
    const auto& link = cluster_.link(l);
    f.latency += link.latency;
    if (link.bandwidth < f.bottleneck) f.bottleneck = link.bandwidth;
  }
  cache_.emplace(key, f);
  return f;
}

Time AnalyticalNetwork::transfer_time(const Transfer& t) const {
  if (t.src_gpu == t.dst_gpu) return Time::zero();
  const PathFigures f = path(t);  // no bytes: the route's latencies, as the flow and packet models
  return f.latency + f.bottleneck.transfer_time(t.bytes);
}

void AnalyticalNetwork::start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
                              uint64_t payload) {
  delivered_ += t.bytes;
  if (t.drained != nullptr) {
    // Its bytes have left the sender once they have crossed the bottleneck: the time alone less
    // the route's latency.
    const Time drain = t.src_gpu == t.dst_gpu ? Time::zero() : path(t).bottleneck.transfer_time(t.bytes);
    engine.schedule_in(drain, *t.drained, t.drained_payload);
  }
  engine.schedule_in(transfer_time(t), done, payload);
}

}  // namespace dtsim::network
