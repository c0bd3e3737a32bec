// AnalyticalNetwork: the contention-free NetworkModel. A transfer takes the latency of its routed
// path (the sum of its links' latencies) plus its bytes at the path's bottleneck bandwidth, as if
// it were alone on the network; concurrent transfers do not slow each other. It is the reference
// the flow model must match when flows do not share links, and it executes collective schedules
// at closed-form speed.
//   network::AnalyticalNetwork net(cluster);
//   net.start(engine, {.src_gpu = 0, .dst_gpu = 8, .bytes = Bytes::mib(4)}, handler, tag);
#pragma once

#include <unordered_map>

#include "network/network_model.h"
#include "topology/cluster.h"

namespace dtsim::network {

class AnalyticalNetwork : public NetworkModel {
 public:
  explicit AnalyticalNetwork(const topology::Cluster& cluster) : cluster_(cluster) {}

  std::string_view name() const override { return "analytical"; }
  void start(sim::Engine& engine, const Transfer& t, sim::EventHandler& done,
             uint64_t payload) override;
  Bytes bytes_delivered() const override { return delivered_; }

  // The time `t` takes alone on the network: path latency + bytes / bottleneck bandwidth.
  Time transfer_time(const Transfer& t) const;

 private:
  struct PathFigures {
    Time latency;
    Bandwidth bottleneck;
  };
  PathFigures path(const Transfer& t) const;

  const topology::Cluster& cluster_;
  mutable std::unordered_map<uint64_t, PathFigures> cache_;  // by (src, dst, hash); lookup only
  Bytes delivered_;
};

}  // namespace dtsim::network
