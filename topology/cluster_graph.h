// ClusterGraph: the Boost.Graph view of a cluster: one vertex per device, one edge per directed
// link, stored as a compressed sparse row graph (a few bytes per edge, so 100k-GPU clusters stay
// small). Each edge carries its LinkId; out-edges of a vertex are in increasing LinkId order,
// which is what makes every walk over the graph (routing, ECMP) deterministic.
//   for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) use(g[e].link);
#pragma once

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cstdint>
#include <span>

#include "topology/cluster.h"

namespace dtsim::topology {

struct LinkEdge {
  LinkId link = 0;
};

using ClusterGraph =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, LinkEdge,
                                       boost::no_property, uint32_t, uint32_t>;

ClusterGraph make_cluster_graph(size_t device_count, std::span<const Link> links);

}  // namespace dtsim::topology
