#include "topology/bisection.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace dtsim::topology {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

// Capacities in MB/s keep the flow integral (exact) and far from overflow.
int64_t mbps(Bandwidth b) {
  return std::llround(b.bytes_per_s() / 1e6);
}

struct Flow {
  FlowGraph g;
  // One direction: an edge with its capacity and a zero-capacity reverse for the residual, the
  // form push_relabel_max_flow checks its result against.
  void arc(size_t a, size_t b, int64_t cap) {
    auto [e, ok1] = boost::add_edge(a, b, g);
    auto [r, ok2] = boost::add_edge(b, a, g);
    (void)ok1;
    (void)ok2;
    boost::put(boost::edge_capacity, g, e, cap);
    boost::put(boost::edge_capacity, g, r, int64_t{0});
    boost::put(boost::edge_reverse, g, e, r);
    boost::put(boost::edge_reverse, g, r, e);
  }
  // Both directions of a full-duplex link.
  void pair(size_t a, size_t b, int64_t cap_ab, int64_t cap_ba) {
    if (cap_ab > 0) arc(a, b, cap_ab);
    if (cap_ba > 0) arc(b, a, cap_ba);
  }
};

}  // namespace

Bandwidth bisection_bandwidth(const Cluster& c) {
  const auto devices = c.devices();
  const auto links = c.links();
  const int nodes = c.spec().nodes;
  const bool split_nodes = nodes >= 2;
  // "Unbounded" source and sink edges: more than every link together can carry, so they never
  // form the cut, yet small enough that push-relabel's excess sums stay within int64_t.
  int64_t total = 1;
  for (const auto& l : links) total += mbps(l.bandwidth);
  const int64_t kUnbounded = total;

  // Vertex of each device: its node's vertex when nodes are contracted, else its own.
  std::vector<size_t> vertex(devices.size());
  size_t count = 0;
  if (split_nodes) {
    count = static_cast<size_t>(nodes);
    for (size_t d = 0; d < devices.size(); ++d) {
      vertex[d] = devices[d].node >= 0 ? static_cast<size_t>(devices[d].node) : count++;
    }
  } else {
    for (size_t d = 0; d < devices.size(); ++d) vertex[d] = count++;
  }
  const size_t source = count++;
  const size_t sink = count++;
  Flow f{FlowGraph(count)};
  for (size_t l = 0; l + 1 < links.size(); l += 2) {
    size_t a = vertex[links[l].from];
    size_t b = vertex[links[l].to];
    if (a == b) continue;
    f.pair(a, b, mbps(links[l].bandwidth), mbps(links[l + 1].bandwidth));
  }
  if (split_nodes) {
    for (int n = 0; n < nodes; ++n) {
      if (n < nodes / 2)
        f.pair(source, static_cast<size_t>(n), kUnbounded, 0);
      else
        f.pair(static_cast<size_t>(n), sink, kUnbounded, 0);
    }
  } else {
    const int gpus = c.gpu_count();
    if (gpus < 2) return Bandwidth();
    for (int g = 0; g < gpus; ++g) {
      size_t v = vertex[c.gpu_device(g)];
      if (g < gpus / 2)
        f.pair(source, v, kUnbounded, 0);
      else
        f.pair(v, sink, kUnbounded, 0);
    }
  }
  int64_t flow = boost::push_relabel_max_flow(f.g, source, sink);
  return Bandwidth::bytes_per_s(static_cast<double>(flow) * 1e6);
}

}  // namespace dtsim::topology
