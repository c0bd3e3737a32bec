// Test fixtures shared by the flow and packet network model tests: a star of GPUs on one switch
// and a recorder of completion times.
#pragma once

#include <algorithm>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "network/network_model.h"
#include "sim/engine.h"
#include "topology/cluster.h"

namespace dtsim::testing_support {

// GPUs on one switch: gpu i sends up link 2i (gpu -> switch) and receives on down link 2i+1
// (switch -> gpu), so any two transfers into the same GPU share its down link, as in an incast.
class StarCluster : public topology::Cluster {
 public:
  // `sink` is the last GPU's down link's bandwidth (default: bw), a bottleneck for an incast into it.
  StarCluster(int gpus, Bandwidth bw, Time latency, Bandwidth sink = Bandwidth{}) {
    spec_.nodes = gpus;
    spec_.gpus_per_node = 1;
    for (int i = 0; i < gpus; ++i)
      devices_.push_back({topology::DeviceKind::gpu, "gpu" + std::to_string(i), i, 0, 0});
    devices_.push_back({topology::DeviceKind::network_switch, "switch", -1, 0, 0});
    const auto sw = static_cast<topology::DeviceId>(gpus);
    for (int i = 0; i < gpus; ++i) {
      const auto g = static_cast<topology::DeviceId>(i);
      links_.push_back({g, sw, topology::LinkKind::network, bw, latency});
      const bool slow = i + 1 == gpus && !sink.is_zero();
      links_.push_back({sw, g, topology::LinkKind::network, slow ? sink : bw, latency});
    }
  }
  const topology::ClusterSpec& spec() const override { return spec_; }
  std::span<const topology::Device> devices() const override { return devices_; }
  std::span<const topology::Link> links() const override { return links_; }
  int gpu_count() const override { return static_cast<int>(devices_.size()) - 1; }
  topology::DeviceId gpu_device(int gpu) const override {
    return static_cast<topology::DeviceId>(gpu);
  }
  std::vector<topology::LinkId> route(int src, int dst, uint64_t /*flow_hash*/) const override {
    return {static_cast<topology::LinkId>(2 * src), static_cast<topology::LinkId>(2 * dst + 1)};
  }

 private:
  topology::ClusterSpec spec_;
  std::vector<topology::Device> devices_;
  std::vector<topology::Link> links_;
};

struct Recorder final : sim::EventHandler {
  std::vector<std::pair<uint64_t, Time>> done;
  void on_event(sim::Engine& e, uint64_t payload) override { done.emplace_back(payload, e.now()); }
  Time time_of(uint64_t payload) const {
    for (const auto& [p, t] : done) {
      if (p == payload) return t;
    }
    return Time::max();
  }
  // When the last transfer completed (the engine may run on: the packet model's acknowledgements).
  Time last() const {
    Time t;
    for (const auto& d : done) t = std::max(t, d.second);
    return t;
  }
};

// Runs `senders` transfers of `size` from GPUs 0, 1, ... into GPU `senders` on `net`, all started
// at time zero; every one completes and every byte arrives.
inline Recorder run_incast(network::NetworkModel& net, int senders, Bytes size) {
  sim::Engine engine;
  Recorder r;
  for (int i = 0; i < senders; ++i) {
    net.start(engine, {.src_gpu = i, .dst_gpu = senders, .bytes = size}, r, static_cast<uint64_t>(i));
  }
  engine.run();
  EXPECT_EQ(r.done.size(), static_cast<size_t>(senders));
  EXPECT_EQ(net.bytes_delivered(), size * senders);
  return r;
}

}  // namespace dtsim::testing_support
