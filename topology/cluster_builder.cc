#include "topology/cluster_builder.h"

#include <algorithm>
#include <boost/pending/disjoint_sets.hpp>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "sim/error.h"
#include "topology/graph_cluster.h"

namespace dtsim::topology {

DeviceId ClusterBuilder::add_device(DeviceKind kind, std::string name, int node, int tier,
                                    int local) {
  devices_.push_back(Device{kind, std::move(name), node, tier, local});
  return static_cast<DeviceId>(devices_.size() - 1);
}

LinkId ClusterBuilder::connect(DeviceId a, DeviceId b, LinkKind kind, Bandwidth bandwidth,
                               Time latency) {
  if (a >= devices_.size() || b >= devices_.size() || a == b) {
    throw std::logic_error("ClusterBuilder::connect: bad endpoints");
  }
  auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, kind, bandwidth, latency});
  links_.push_back(Link{b, a, kind, bandwidth, latency});
  return id;
}

void ClusterBuilder::reserve(size_t devices, size_t link_pairs) {
  devices_.reserve(devices);
  links_.reserve(2 * link_pairs);
}

std::unique_ptr<Cluster> ClusterBuilder::finish(ClusterSpec spec) && {
  std::vector<DeviceId> gpus;
  for (DeviceId d = 0; d < devices_.size(); ++d) {
    if (devices_[d].kind == DeviceKind::gpu) gpus.push_back(d);
  }
  std::stable_sort(gpus.begin(), gpus.end(), [&](DeviceId a, DeviceId b) {
    return std::tie(devices_[a].node, devices_[a].local) <
           std::tie(devices_[b].node, devices_[b].local);
  });
  if (gpus.size() != static_cast<size_t>(spec.nodes) * static_cast<size_t>(spec.gpus_per_node)) {
    throw std::logic_error("ClusterBuilder::finish: GPU count disagrees with the spec");
  }
  // A GPU's local index is its rank within its node, whatever order a file listed it in.
  for (size_t i = 0; i < gpus.size(); ++i) {
    devices_[gpus[i]].local = static_cast<int>(i % static_cast<size_t>(spec.gpus_per_node));
  }

  // Every GPU must reach every other: union the endpoints of all links (Boost disjoint sets).
  std::vector<size_t> rank(devices_.size()), parent(devices_.size());
  boost::disjoint_sets<size_t*, size_t*> sets(rank.data(), parent.data());
  for (size_t d = 0; d < devices_.size(); ++d) sets.make_set(d);
  for (size_t l = 0; l < links_.size(); l += 2) sets.union_set(links_[l].from, links_[l].to);
  for (DeviceId g : gpus) {
    if (sets.find_set(g) != sets.find_set(gpus.front())) {
      throw InputError(SourceLocation{spec.topology_file.value_or(""), 0, 0}, devices_[g].name,
                       "GPU is not connected to " + devices_[gpus.front()].name);
    }
  }
  return std::make_unique<GraphCluster>(std::move(spec), std::move(devices_), std::move(links_),
                                        std::move(gpus));
}

}  // namespace dtsim::topology
