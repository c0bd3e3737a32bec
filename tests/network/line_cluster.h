// LineCluster: a test Cluster of GPUs in a line, gpu i joined to gpu i+1 by one link pair of a
// given bandwidth and latency; routes follow the line. Small enough to reason about by hand.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster.h"

namespace dtsim::testing_support {

class LineCluster : public topology::Cluster {
 public:
  struct Hop {
    Bandwidth bandwidth;
    Time latency;
  };
  explicit LineCluster(const std::vector<Hop>& hops) {
    spec_.nodes = static_cast<int>(hops.size()) + 1;
    spec_.gpus_per_node = 1;
    for (size_t i = 0; i <= hops.size(); ++i) {
      devices_.push_back(
          {topology::DeviceKind::gpu, "gpu" + std::to_string(i), static_cast<int>(i), 0, 0});
    }
    for (size_t i = 0; i < hops.size(); ++i) {
      const auto a = static_cast<topology::DeviceId>(i);
      links_.push_back({a, a + 1, topology::LinkKind::network, hops[i].bandwidth, hops[i].latency});
      links_.push_back({a + 1, a, topology::LinkKind::network, hops[i].bandwidth, hops[i].latency});
    }
  }
  const topology::ClusterSpec& spec() const override { return spec_; }
  std::span<const topology::Device> devices() const override { return devices_; }
  std::span<const topology::Link> links() const override { return links_; }
  int gpu_count() const override { return static_cast<int>(devices_.size()); }
  topology::DeviceId gpu_device(int gpu) const override {
    return static_cast<topology::DeviceId>(gpu);
  }
  std::vector<topology::LinkId> route(int src, int dst, uint64_t /*flow_hash*/) const override {
    std::vector<topology::LinkId> out;
    for (int i = src; i < dst; ++i) out.push_back(static_cast<topology::LinkId>(2 * i));
    for (int i = src; i > dst; --i) out.push_back(static_cast<topology::LinkId>(2 * (i - 1) + 1));
    return out;
  }

 private:
  topology::ClusterSpec spec_;
  std::vector<topology::Device> devices_;
  std::vector<topology::Link> links_;
};

// A switch-like cluster: every pair of GPUs one hop apart with the same bandwidth and latency.
class CrossbarCluster : public topology::Cluster {
 public:
  CrossbarCluster(int gpus, Bandwidth bw, Time latency) {
    spec_.nodes = 1;
    spec_.gpus_per_node = gpus;
    for (int i = 0; i < gpus; ++i) {
      devices_.push_back({topology::DeviceKind::gpu, "gpu" + std::to_string(i), 0, 0, i});
    }
    for (int a = 0; a < gpus; ++a) {
      for (int b = 0; b < gpus; ++b) {
        links_.push_back({static_cast<topology::DeviceId>(a), static_cast<topology::DeviceId>(b),
                          topology::LinkKind::nvlink, bw, latency});
      }
    }
  }
  const topology::ClusterSpec& spec() const override { return spec_; }
  std::span<const topology::Device> devices() const override { return devices_; }
  std::span<const topology::Link> links() const override { return links_; }
  int gpu_count() const override { return static_cast<int>(devices_.size()); }
  topology::DeviceId gpu_device(int gpu) const override {
    return static_cast<topology::DeviceId>(gpu);
  }
  std::vector<topology::LinkId> route(int src, int dst, uint64_t /*flow_hash*/) const override {
    return {static_cast<topology::LinkId>(src * gpu_count() + dst)};
  }

 private:
  topology::ClusterSpec spec_;
  std::vector<topology::Device> devices_;
  std::vector<topology::Link> links_;
};

}  // namespace dtsim::testing_support
