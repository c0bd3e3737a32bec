#include "network/packet/partition.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dtsim::network {

ClusterPartition partition_cluster(const topology::Cluster& cluster, uint32_t partitions) {
  if (partitions == 0) throw std::invalid_argument("partition_cluster: at least one partition");
  const auto devices = cluster.devices();
  const auto links = cluster.links();
  int nodes = 0;
  int top_tier = 0;
  for (const topology::Device& d : devices) {
    nodes = std::max(nodes, d.node + 1);
    if (d.node < 0) top_tier = std::max(top_tier, d.tier);
  }
  ClusterPartition cut;
  cut.partitions = std::max<uint32_t>(1, std::min<uint32_t>(partitions, static_cast<uint32_t>(nodes)));
  constexpr uint32_t kUnset = UINT32_MAX;
  cut.owner.assign(devices.size(), kUnset);
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].node >= 0) {
      cut.owner[d] = static_cast<uint32_t>(int64_t{devices[d].node} * cut.partitions / nodes);
    }
  }
  // Links out of each device, to count where a switch's links lead.
  std::vector<std::vector<topology::DeviceId>> neighbours(devices.size());
  for (const topology::Link& l : links) neighbours[l.from].push_back(l.to);
  for (int tier = 0; tier <= top_tier; ++tier) {
    std::vector<uint32_t> switches_here(cut.partitions, 0);
    for (size_t d = 0; d < devices.size(); ++d) {
      if (devices[d].node >= 0 || devices[d].tier != tier) continue;
      std::vector<uint32_t> votes(cut.partitions, 0);
      for (topology::DeviceId n : neighbours[d]) {
        if (cut.owner[n] != kUnset) ++votes[cut.owner[n]];
      }
      uint32_t best = 0;
      for (uint32_t p = 1; p < cut.partitions; ++p) {
        if (votes[p] > votes[best] ||
            (votes[p] == votes[best] && switches_here[p] < switches_here[best])) {
          best = p;
        }
      }
      cut.owner[d] = best;
      ++switches_here[best];
    }
  }
  for (uint32_t& o : cut.owner) {
    if (o == kUnset) o = 0;  // a device outside nodes and tiers (none today)
  }
  if (cut.partitions > 1) {
    for (size_t l = 0; l < links.size(); ++l) {
      if (cut.owner[links[l].from] == cut.owner[links[l].to]) continue;
      if (links[l].latency <= Time::zero()) {
        throw std::invalid_argument("partition_cluster: link " + cluster.link_name(static_cast<topology::LinkId>(l)) +
                                    " joins two partitions and has no latency");
      }
      cut.lookahead = std::min(cut.lookahead, links[l].latency);
    }
  }
  for (int g = 0; g < cluster.gpu_count(); ++g) cut.of_gpu.push_back(cut.owner[cluster.gpu_device(g)]);
  return cut;
}

}  // namespace dtsim::network
