#include "topology/cluster_graph.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace dtsim::topology {

ClusterGraph make_cluster_graph(size_t device_count, std::span<const Link> links) {
  std::vector<LinkId> order(links.size());
  std::iota(order.begin(), order.end(), LinkId{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](LinkId a, LinkId b) { return links[a].from < links[b].from; });
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  std::vector<LinkEdge> props;
  edges.reserve(links.size());
  props.reserve(links.size());
  for (LinkId l : order) {
    edges.emplace_back(links[l].from, links[l].to);
    props.push_back(LinkEdge{l});
  }
  return ClusterGraph(boost::edges_are_sorted, edges.begin(), edges.end(), props.begin(),
                      static_cast<uint32_t>(device_count));
}

}  // namespace dtsim::topology
