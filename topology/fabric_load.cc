// Each pattern becomes demands between the routers its NICs plug into; the demands of one
// source router are spread over its least-hop routes in one pass over the breadth-first DAG
// (Brandes' accumulation, weighted by demand): a route's share of a demand is 1 over the number
// of least-hop routes, parallel links counting as distinct routes, as ECMP numbers them.
#include "topology/fabric_load.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dtsim::topology {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct RouterGraph {
  struct Arc {
    uint32_t from;
    uint32_t to;
    double gbytes;
  };
  std::vector<Arc> arcs;                       // switch-to-switch links, one per direction
  std::vector<std::vector<uint32_t>> out;      // arcs leaving each router
  std::vector<std::vector<uint32_t>> in;       // arcs entering each router
  std::vector<std::vector<uint32_t>> nic_at;   // per node, the router each of its NICs plugs into
};

RouterGraph router_graph(const Cluster& c) {
  RouterGraph g;
  const auto devices = c.devices();
  std::vector<uint32_t> router(devices.size(), kNone);
  uint32_t routers = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].kind == DeviceKind::network_switch) router[d] = routers++;
  }
  g.out.resize(routers);
  g.in.resize(routers);
  g.nic_at.resize(static_cast<size_t>(c.spec().nodes));
  for (const Link& l : c.links()) {
    const Device& from = devices[l.from];
    if (router[l.from] != kNone && router[l.to] != kNone) {
      const auto a = static_cast<uint32_t>(g.arcs.size());
      g.arcs.push_back({router[l.from], router[l.to], l.bandwidth.gbytes_per_s()});
      g.out[router[l.from]].push_back(a);
      g.in[router[l.to]].push_back(a);
    } else if (from.kind == DeviceKind::nic && router[l.to] != kNone && from.node >= 0) {
      auto& nics = g.nic_at[static_cast<size_t>(from.node)];
      if (nics.size() <= static_cast<size_t>(from.local)) nics.resize(static_cast<size_t>(from.local) + 1, kNone);
      nics[static_cast<size_t>(from.local)] = router[l.to];
    }
  }
  return g;
}

// A pattern between nodes: who each node sends to and how much, and how a node's bytes to another
// node split over their NICs (nic_split[j][k]: the share leaving through NIC j, entering NIC k).
struct Pattern {
  std::vector<std::vector<std::pair<int, double>>> to;  // per node: (destination node, bytes)
  double to_every_other = 0;                            // and these bytes to every other node
  std::vector<std::vector<std::pair<size_t, double>>> nic_split;  // per NIC j: (NIC k, share)
};

// Where each router's NICs belong: (node, NIC index) pairs.
std::vector<std::vector<std::pair<int, int>>> nics_by_router(const RouterGraph& g, int nodes) {
  std::vector<std::vector<std::pair<int, int>>> at(g.out.size());
  for (int i = 0; i < nodes; ++i) {
    const auto& nics = g.nic_at[static_cast<size_t>(i)];
    for (size_t j = 0; j < nics.size(); ++j) {
      if (nics[j] != kNone) at[nics[j]].emplace_back(i, static_cast<int>(j));
    }
  }
  return at;
}

// The node's rate for the pattern: its busiest node's bytes over the busiest link's time.
double rate_of(const RouterGraph& g, const Pattern& p) {
  const size_t n = g.out.size();
  const int nodes = static_cast<int>(p.to.size());
  const auto at = nics_by_router(g, nodes);
  std::vector<double> load(g.arcs.size(), 0.0);
  // Per source, only the routers it reaches are touched and then reset: the arrays stay clean.
  std::vector<double> sigma(n, 0.0), delta(n, 0.0), want(n, 0.0);
  std::vector<uint32_t> dist(n, kNone), order, targets;
  order.reserve(n);
  for (uint32_t s = 0; s < n; ++s) {
    targets.clear();
    for (const auto& [i, j] : at[s]) {
      const auto& split = p.nic_split[static_cast<size_t>(j) % p.nic_split.size()];
      auto send = [&](int k, double bytes) {
        const auto& dst = g.nic_at[static_cast<size_t>(k)];
        if (dst.empty()) return;
        for (const auto& [jj, share] : split) {
          const uint32_t t = dst[jj % dst.size()];
          if (t == kNone || t == s) continue;
          if (want[t] == 0) targets.push_back(t);
          want[t] += bytes * share;
        }
      };
      for (const auto& [k, bytes] : p.to[static_cast<size_t>(i)]) send(k, bytes);
      if (p.to_every_other > 0) {
        for (int k = 0; k < nodes; ++k) {
          if (k != i) send(k, p.to_every_other);
        }
      }
    }
    if (targets.empty()) continue;
    // Breadth first, counting least-hop routes; routers beyond the farthest target's distance
    // are not expanded (a ring's targets are a hop or two away).
    order.clear();
    dist[s] = 0;
    sigma[s] = 1;
    order.push_back(s);
    size_t unreached = targets.size();
    uint32_t horizon = kNone;
    for (size_t i = 0; i < order.size(); ++i) {
      const uint32_t u = order[i];
      if (dist[u] >= horizon) break;
      for (uint32_t a : g.out[u]) {
        const uint32_t v = g.arcs[a].to;
        if (dist[v] == kNone) {
          dist[v] = dist[u] + 1;
          order.push_back(v);
          if (want[v] > 0 && --unreached == 0) horizon = dist[v];
        }
        if (dist[v] == dist[u] + 1) sigma[v] += sigma[u];
      }
    }
    for (size_t i = order.size(); i-- > 1;) {
      const uint32_t w = order[i];
      const double per_route = (want[w] + delta[w]) / sigma[w];
      if (per_route == 0) continue;
      for (uint32_t a : g.in[w]) {
        const uint32_t v = g.arcs[a].from;
        if (dist[v] == kNone || dist[v] + 1 != dist[w]) continue;
        load[a] += sigma[v] * per_route;
        delta[v] += sigma[v] * per_route;
      }
    }
    for (uint32_t v : order) {
      dist[v] = kNone;
      sigma[v] = delta[v] = 0;
    }
    for (uint32_t t : targets) want[t] = 0;
  }
  double busiest = 0;  // the busiest link's seconds per byte of the pattern, up to a common factor
  for (size_t a = 0; a < g.arcs.size(); ++a) busiest = std::max(busiest, load[a] / g.arcs[a].gbytes);
  double most = 0;
  for (const auto& dests : p.to) {
    double out = p.to_every_other * (nodes - 1);
    for (const auto& [k, bytes] : dests) out += bytes;
    most = std::max(most, out);
  }
  return busiest > 0 ? most / busiest : std::numeric_limits<double>::infinity();
}

}  // namespace

PatternRates pattern_rates(const Cluster& cluster, int nodes) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int m = std::min(nodes, cluster.spec().nodes);
  if (m <= 1) return {inf, inf, inf};
  const RouterGraph g = router_graph(cluster);
  const int gpus = std::max(1, cluster.spec().gpus_per_node);
  const int nics = std::max(1, cluster.spec().nic.count);
  const auto mi = static_cast<size_t>(m);
  auto nic_of = [&](int gpu) { return static_cast<size_t>(gpu * nics / gpus); };
  using Split = std::vector<std::vector<std::pair<size_t, double>>>;
  using Dests = std::vector<std::vector<std::pair<int, double>>>;
  Split rail(static_cast<size_t>(nics));  // NIC j to NIC j, 1/nics of the bytes each
  for (size_t j = 0; j < rail.size(); ++j) rail[j].emplace_back(j, 1.0 / nics);
  PatternRates r;

  // Channel c leaves through GPU c - 1's NIC and enters through GPU c's.
  Pattern ring{Dests(mi), 0, Split(static_cast<size_t>(nics))};
  for (int ch = 0; ch < gpus; ++ch) {
    ring.nic_split[nic_of((ch + gpus - 1) % gpus)].emplace_back(nic_of(ch), 1.0 / gpus);
  }
  for (int i = 0; i < m; ++i) ring.to[static_cast<size_t>(i)].emplace_back((i + 1) % m, 1.0);
  r.ring = rate_of(g, ring);

  Pattern tree{Dests(mi), 0, rail};
  auto edge = [&](int a, int b) {
    tree.to[static_cast<size_t>(a)].emplace_back(b, 0.5);
    tree.to[static_cast<size_t>(b)].emplace_back(a, 0.5);
  };
  for (int k = 1; k < m; ++k) {
    edge((k - 1) / 2, k);
    edge(m - 1 - (k - 1) / 2, m - 1 - k);
  }
  r.tree = rate_of(g, tree);

  r.uniform = rate_of(g, Pattern{Dests(mi), 1.0, rail});
  return r;
}

}  // namespace dtsim::topology
