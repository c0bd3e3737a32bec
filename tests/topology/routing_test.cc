#include <gtest/gtest.h>

#include <algorithm>
#include <boost/range/iterator_range.hpp>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <thread>

#include "spec_helpers.h"
#include "topology/cluster.h"
#include "topology/graph_cluster.h"
#include "topology/topology_file.h"

namespace dtsim::topology {
namespace {

using testing::hgx;
using testing::one_nic_nodes;

// Fewest links from one device to another, by plain BFS over the Boost graph, where no GPU but
// the two ends forwards (an independent check of the router's least-cost paths).
int bfs_hops(const GraphCluster& c, DeviceId from, DeviceId to) {
  const auto& g = c.graph();
  std::vector<int> dist(c.devices().size(), -1);
  std::vector<DeviceId> queue{from};
  dist[from] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    DeviceId v = queue[i];
    if (v != from && c.device(v).kind == DeviceKind::gpu) continue;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      DeviceId u = c.link(g[e].link).to;
      if (dist[u] < 0) {
        dist[u] = dist[v] + 1;
        queue.push_back(u);
      }
    }
  }
  return dist[to];
}

void expect_contiguous(const Cluster& c, const std::vector<LinkId>& path, DeviceId from,
                       DeviceId to) {
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(c.link(path.front()).from, from);
  EXPECT_EQ(c.link(path.back()).to, to);
  for (size_t i = 1; i < path.size(); ++i) EXPECT_EQ(c.link(path[i - 1]).to, c.link(path[i]).from);
}

TEST(Ecmp, EveryEqualCostPathIsAShortestPath) {
  auto built = build_cluster(one_nic_nodes(16, FabricKind::fat_tree, 4, 3));
  const auto& c = static_cast<const GraphCluster&>(*built);
  for (int dst : {1, 2, 5, 15}) {
    auto paths = c.equal_cost_paths(0, dst, 1000);
    EXPECT_EQ(paths.size(), c.path_count(0, dst));
    int shortest = bfs_hops(c, c.gpu_device(0), c.gpu_device(dst));
    std::set<std::vector<LinkId>> distinct(paths.begin(), paths.end());
    EXPECT_EQ(distinct.size(), paths.size());
    for (const auto& p : paths) {
      expect_contiguous(c, p, c.gpu_device(0), c.gpu_device(dst));
      EXPECT_EQ(static_cast<int>(p.size()), shortest);
    }
  }
}

TEST(Ecmp, PathDiversityInAK4FatTreeIsTwoInPodAndFourAcrossPods) {
  auto c = build_cluster(one_nic_nodes(16, FabricKind::fat_tree, 4, 3));
  EXPECT_EQ(c->path_count(0, 1), 1u);   // same leaf
  EXPECT_EQ(c->path_count(0, 2), 2u);   // same pod: either aggregation switch
  EXPECT_EQ(c->path_count(0, 15), 4u);  // across pods: 2 aggregation x 2 core
}

TEST(Ecmp, HashSpreadsTenThousandFlowsWithinTenPercentOfUniform) {
  auto c = build_cluster(one_nic_nodes(16, FabricKind::fat_tree, 4, 3));
  std::map<DeviceId, int> agg;   // first hop up from the leaf
  std::map<DeviceId, int> core;  // second hop up
  const int flows = 10000;
  for (uint64_t h = 0; h < flows; ++h) {
    auto r = c->route(0, 15, h);
    int seen = 0;
    for (LinkId l : r) {
      const Device& to = c->device(c->link(l).to);
      if (to.kind != DeviceKind::network_switch) continue;
      if (seen == 1) ++agg[c->link(l).to];
      if (seen == 2) ++core[c->link(l).to];
      ++seen;
    }
  }
  ASSERT_EQ(agg.size(), 2u);
  ASSERT_EQ(core.size(), 4u);
  for (auto [d, n] : agg) EXPECT_NEAR(n, flows / 2.0, flows / 2.0 * 0.1) << c->device(d).name;
  for (auto [d, n] : core) EXPECT_NEAR(n, flows / 4.0, flows / 4.0 * 0.1) << c->device(d).name;
}

TEST(Ecmp, SameFlowHashGivesTheSameRoute) {
  auto c = build_cluster(hgx(16, FabricKind::fat_tree, 8, 3));
  EXPECT_EQ(c->route(3, 120, 77), c->route(3, 120, 77));
}

TEST(Routing, GpusOfOneNodeTalkOverNvlink) {
  auto c = build_cluster(hgx(2, FabricKind::fat_tree));
  auto r = c->route(1, 6);
  ASSERT_EQ(r.size(), 2u);
  for (LinkId l : r) EXPECT_EQ(c->link(l).kind, LinkKind::nvlink);
}

TEST(Routing, GpuLeavesThroughItsOwnNic) {
  auto c = build_cluster(hgx(2, FabricKind::fat_tree));
  auto r = c->route(5, 13);
  expect_contiguous(*c, r, c->gpu_device(5), c->gpu_device(13));
  EXPECT_EQ(c->device(c->link(r[0]).to).kind, DeviceKind::pcie_switch);
  EXPECT_EQ(c->device(c->link(r[1]).to).name, "node0/nic5");
  EXPECT_EQ(c->device(c->link(r[r.size() - 2]).from).name, "node1/nic5");
}

// With more NICs than GPUs (AWS P5: 32 EFA NICs for 8 GPUs) each GPU leaves through its own
// four, NICs 4i..4i+3, and flows spread over all of them; it once kept only NIC 4i.
TEST(Routing, GpuWithSeveralNicsOfItsOwnSpreadsFlowsOverAllOfThem) {
  ClusterSpec spec = hgx(2, FabricKind::fat_tree);
  spec.nic.count = 32;
  spec.nic.bandwidth = Bandwidth::gbps(100);
  auto c = build_cluster(spec);
  for (int gpu : {0, 5}) {
    std::set<std::string> nics;
    for (uint64_t hash = 0; hash < 256; ++hash) {
      auto r = c->route(gpu, 8 + gpu, hash * 0x9e3779b97f4a7c15ULL);
      expect_contiguous(*c, r, c->gpu_device(gpu), c->gpu_device(8 + gpu));
      for (LinkId l : r) {
        const Device& d = c->device(c->link(l).from);
        if (d.kind == DeviceKind::nic && d.node == 0) nics.insert(d.name);
      }
    }
    std::set<std::string> own;
    for (int k = 0; k < 4; ++k) own.insert("node0/nic" + std::to_string(4 * gpu + k));
    EXPECT_EQ(nics, own) << "GPU " << gpu;
  }
}

// A transfer pinned to NIC slot s leaves through the s-th of its GPU's own NICs and enters
// through the s-th of the destination GPU's, whatever its hash, as NCCL pins a channel to a NIC.
TEST(Routing, NicSlotPicksTheNicsAtBothEnds) {
  ClusterSpec spec = hgx(2, FabricKind::fat_tree);
  spec.nic.count = 32;
  spec.nic.bandwidth = Bandwidth::gbps(100);
  auto c = build_cluster(spec);
  for (int slot = 0; slot < 8; ++slot) {
    for (uint64_t hash : {0ULL, 12345ULL, 0x9e3779b97f4a7c15ULL}) {
      auto r = c->route_nic(5, 13, hash, slot);
      expect_contiguous(*c, r, c->gpu_device(5), c->gpu_device(13));
      std::vector<std::string> nics;
      for (LinkId l : r) {
        if (c->device(c->link(l).to).kind == DeviceKind::nic) nics.push_back(c->device(c->link(l).to).name);
      }
      ASSERT_EQ(nics.size(), 2u);
      EXPECT_EQ(nics[0], "node0/nic" + std::to_string(20 + slot % 4)) << slot;
      EXPECT_EQ(nics[1], "node1/nic" + std::to_string(20 + slot % 4)) << slot;
    }
  }
  // Without a slot the hash picks, as route() does.
  EXPECT_EQ(c->route_nic(5, 13, 99, -1), c->route(5, 13, 99));
}

// The sprayed routes of one transfer on 2-tier fat-trees whose two nodes hang off different
// leaves: a P5-like pair (32 NICs a node, radix 64: 32 spines), 64 NICs a node at radix 128 (64
// spines, more than K) and an HGX pair at radix 8 (4 spines). Each set holds min(K, spines)
// distinct routes, the first the one route_nic picks, all leaving through the same NIC cable and
// entering through the same one, over distinct leaf uplinks.
TEST(Spraying, SprayedRoutesShareTheNicsAndUseDistinctLeafUplinks) {
  ClusterSpec p5 = hgx(2, FabricKind::fat_tree);
  p5.nic.count = 32;
  p5.nic.bandwidth = Bandwidth::gbps(100);
  ClusterSpec wide = hgx(2, FabricKind::fat_tree, 128);
  wide.nic.count = 64;
  for (const ClusterSpec& spec : {p5, wide, hgx(2, FabricKind::fat_tree, 8, 2)}) {
    auto c = build_cluster(spec);
    // The cable out of the source's NIC, and the cable into the destination's.
    auto nic_out = [&](const std::vector<LinkId>& r) {
      return std::find_if(r.begin(), r.end(), [&](LinkId l) { return c->device(c->link(l).from).kind == DeviceKind::nic; });
    };
    auto nic_in = [&](const std::vector<LinkId>& r) {
      return *std::find_if(r.begin(), r.end(), [&](LinkId l) {
        return c->device(c->link(l).to).kind == DeviceKind::nic && c->device(c->link(l).to).node == 1;
      });
    };
    const auto spines = static_cast<size_t>(spec.fabric.radix / 2);
    const auto nics = static_cast<uint64_t>(spec.nics_per_gpu());
    ASSERT_EQ(c->path_count(5, 13), spines * nics * nics);  // every pair of the GPUs' own NICs
    for (int slot = 0; slot < 4; ++slot) {
      const auto routes = c->sprayed_routes(5, 13, 777, slot, kSprayRoutes);
      ASSERT_EQ(routes.size(), std::min(kSprayRoutes, spines));
      EXPECT_EQ(routes.front(), c->route_nic(5, 13, 777, slot));
      EXPECT_EQ(std::set<std::vector<LinkId>>(routes.begin(), routes.end()).size(), routes.size());
      std::set<LinkId> uplinks;
      for (const auto& r : routes) {
        expect_contiguous(*c, r, c->gpu_device(5), c->gpu_device(13));
        EXPECT_EQ(r.front(), routes.front().front());  // one injection port
        ASSERT_NE(nic_out(r), r.end());
        EXPECT_EQ(*nic_out(r), *nic_out(routes.front()));
        EXPECT_EQ(nic_in(r), nic_in(routes.front()));
        uplinks.insert(*(nic_out(r) + 1));  // the NIC's leaf up to a spine
      }
      EXPECT_EQ(uplinks.size(), routes.size());
    }
    // Other flows spray over other subsets: together they cover every spine.
    std::set<LinkId> covered;
    for (uint64_t hash = 0; hash < 64; ++hash) {
      for (const auto& r : c->sprayed_routes(5, 13, hash, 0, kSprayRoutes)) covered.insert(*(nic_out(r) + 1));
    }
    EXPECT_EQ(covered.size(), spines);
    // K = 1, or a transfer inside a node: the one route.
    EXPECT_EQ(c->sprayed_routes(5, 13, 777, 2, 1), std::vector<std::vector<LinkId>>{c->route_nic(5, 13, 777, 2)});
    EXPECT_EQ(c->sprayed_routes(5, 6, 777, 2, kSprayRoutes).size(), 1u);
  }
}

TEST(Routing, RailOptimizedSameRailStaysOnTheRailSwitch) {
  auto c = build_cluster(hgx(4, FabricKind::rail_optimized));
  auto r = c->route(3, 3 + 8 * 2);
  std::vector<std::string> switches;
  for (LinkId l : r) {
    const Device& d = c->device(c->link(l).to);
    if (d.kind == DeviceKind::network_switch) switches.push_back(d.name);
  }
  EXPECT_EQ(switches, (std::vector<std::string>{"su0/rail3"}));
}

TEST(Routing, RailOptimizedCrossRailGoesThroughASpine) {
  auto c = build_cluster(hgx(4, FabricKind::rail_optimized));
  auto r = c->route(3, 8 + 5);
  int switches = 0;
  for (LinkId l : r) switches += c->device(c->link(l).to).kind == DeviceKind::network_switch;
  EXPECT_EQ(switches, 3);                   // rail 3, a spine, rail 5
  EXPECT_EQ(c->path_count(3, 8 + 5), 32u);  // any of the 32 spines
}

TEST(Routing, PxnHandsOverNvlinkToThePeerOnTheDestinationsRail) {
  auto c = build_cluster(hgx(4, FabricKind::rail_optimized));
  auto r = c->route_pxn(3, 8 + 5);
  expect_contiguous(*c, r, c->gpu_device(3), c->gpu_device(8 + 5));
  EXPECT_EQ(c->link(r[0]).kind, LinkKind::nvlink);
  EXPECT_EQ(c->device(c->link(r[1]).to).name, "node0/gpu5");
  std::vector<std::string> switches;
  for (LinkId l : r) {
    const Device& d = c->device(c->link(l).to);
    if (d.kind == DeviceKind::network_switch) switches.push_back(d.name);
  }
  EXPECT_EQ(switches, (std::vector<std::string>{"su0/rail5"}));
}

TEST(Routing, PxnOnTheSameRailIsTheOrdinaryRoute) {
  auto c = build_cluster(hgx(4, FabricKind::rail_optimized));
  EXPECT_EQ(c->route_pxn(2, 8 + 2, 9), c->route(2, 8 + 2, 9));
}

TEST(Routing, PxnWithoutNvlinkFallsBackToTheOrdinaryRoute) {
  ClusterSpec s = *find_node_preset("pcie-server");
  s.nodes = 2;
  s.fabric.kind = FabricKind::single_switch;
  auto c = build_cluster(s);
  EXPECT_EQ(c->route_pxn(0, 8 + 6, 1), c->route(0, 8 + 6, 1));
}

// The least cost from GPU a to GPU b in the router's link costs, through no other GPU and no
// device of a third node: a plain Dijkstra over every link, independent of the router's tables.
uint64_t least_cost(const GraphCluster& c, int a, int b) {
  const DeviceId from = c.gpu_device(a);
  const DeviceId to = c.gpu_device(b);
  const int ends[] = {c.device(from).node, c.device(to).node};
  std::vector<uint64_t> dist(c.devices().size(), UINT64_MAX);
  std::set<std::pair<uint64_t, DeviceId>> frontier{{0, from}};
  dist[from] = 0;
  while (!frontier.empty()) {
    const auto [d, v] = *frontier.begin();
    frontier.erase(frontier.begin());
    if (v == to) return d;
    if (v != from && c.device(v).kind == DeviceKind::gpu) continue;
    for (const Link& l : c.links()) {
      if (l.from != v) continue;
      const int node = c.device(l.to).node;
      if (node >= 0 && node != ends[0] && node != ends[1]) continue;
      const LinkId id = static_cast<LinkId>(&l - c.links().data());
      const uint64_t nd = d + c.router().cost(id);
      if (nd < dist[l.to]) {
        frontier.erase({dist[l.to], l.to});
        dist[l.to] = nd;
        frontier.insert({nd, l.to});
      }
    }
  }
  return UINT64_MAX;
}

// What the router lists for a pair are its path_count routes, distinct, each joined end to end
// from GPU to GPU at the least cost; and route() takes one of them whatever the hash.
void expect_equal_cost_paths_are_least_cost(const GraphCluster& c, int a, int b) {
  const auto paths = c.equal_cost_paths(a, b, 1 << 20);
  ASSERT_EQ(paths.size(), c.path_count(a, b)) << a << " -> " << b;
  const std::set<std::vector<LinkId>> distinct(paths.begin(), paths.end());
  EXPECT_EQ(distinct.size(), paths.size()) << a << " -> " << b;
  const uint64_t least = least_cost(c, a, b);
  for (const auto& p : paths) {
    expect_contiguous(c, p, c.gpu_device(a), c.gpu_device(b));
    uint64_t cost = 0;
    for (LinkId l : p) cost += c.router().cost(l);
    EXPECT_EQ(cost, least) << a << " -> " << b;
  }
  for (uint64_t h = 0; h < 16; ++h) EXPECT_TRUE(distinct.count(c.route(a, b, h))) << a << " -> " << b;
}

TEST(Ecmp, EveryFabricsRoutesAreItsLeastCostPaths) {
  ClusterSpec dragonfly = one_nic_nodes(64, FabricKind::dragonfly, 16, 2);
  dragonfly.fabric.dragonfly_groups = 4;
  for (const ClusterSpec& spec :
       {one_nic_nodes(16, FabricKind::fat_tree, 4, 3), one_nic_nodes(16, FabricKind::torus, 8, 2), dragonfly}) {
    auto built = build_cluster(spec);
    const auto& c = static_cast<const GraphCluster&>(*built);
    const int step = c.gpu_count() > 16 ? 5 : 1;  // a sample of the dragonfly's pairs
    for (int a = 0; a < c.gpu_count(); a += step) {
      for (int b = 0; b < c.gpu_count(); b += step) {
        if (a != b) expect_equal_cost_paths_are_least_cost(c, a, b);
      }
    }
  }
}

// Three one-GPU nodes whose NICs hang off three leaves under two spines; the first two NICs are
// cabled to two leaves each, so the routes into them end on either.
const char* kDualHomed = R"(devices:
  - {name: n0/gpu0, kind: gpu, node: 0}
  - {name: n0/nic0, kind: nic, node: 0}
  - {name: n1/gpu0, kind: gpu, node: 1}
  - {name: n1/nic0, kind: nic, node: 1}
  - {name: n2/gpu0, kind: gpu, node: 2}
  - {name: n2/nic0, kind: nic, node: 2}
  - {name: leaf0, kind: switch}
  - {name: leaf1, kind: switch}
  - {name: leaf2, kind: switch}
  - {name: spine0, kind: switch}
  - {name: spine1, kind: switch}
links:
  - {from: n0/gpu0, to: n0/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n1/gpu0, to: n1/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n2/gpu0, to: n2/nic0, bandwidth: 50GB/s, latency: 1us}
  - {from: n0/nic0, to: leaf0, bandwidth: 400Gbps, latency: 500ns}
  - {from: n0/nic0, to: leaf1, bandwidth: 400Gbps, latency: 500ns}
  - {from: n1/nic0, to: leaf0, bandwidth: 400Gbps, latency: 500ns}
  - {from: n1/nic0, to: leaf1, bandwidth: 400Gbps, latency: 500ns}
  - {from: n2/nic0, to: leaf2, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf0, to: spine0, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf0, to: spine1, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf1, to: spine0, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf1, to: spine1, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf2, to: spine0, bandwidth: 400Gbps, latency: 500ns}
  - {from: leaf2, to: spine1, bandwidth: 400Gbps, latency: 500ns}
)";

TEST(Ecmp, RoutesIntoANicOnTwoLeavesEndOnEither) {
  auto built = parse_topology_yaml(*find_node_preset("hgx-h100"), kDualHomed, "dual.yaml");
  const auto& c = static_cast<const GraphCluster&>(*built);
  EXPECT_EQ(c.path_count(0, 1), 2u);  // over either shared leaf
  EXPECT_EQ(c.path_count(0, 2), 4u);  // either leaf up, either spine
  EXPECT_EQ(c.path_count(2, 0), 4u);  // either spine, down to either leaf
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a != b) expect_equal_cost_paths_are_least_cost(c, a, b);
    }
  }
}

TEST(Routing, RouteLatencySumsNicScaleUpAndCableLatency) {
  auto c = build_cluster(hgx(2, FabricKind::single_switch));
  Time total;
  for (LinkId l : c->route(0, 8)) total += c->link(l).latency;
  // 2 PCIe hops (250 ns each), the NIC's 2 us once, 2 cables of 500 ns.
  EXPECT_EQ(total, Time::ns(250) * 2 + Time::us(2) + Time::ns(500) * 2);
}

}  // namespace
}  // namespace dtsim::topology

namespace dtsim::topology {
namespace {

// Runs `query(cluster, a, b)` over many GPU pairs on a fresh cluster from four threads at once,
// three times each, and expects every answer to equal the one a serial run on another gave.
template <typename Query>
void expect_concurrent_answers_are_serial(Query query) {
  auto serial = build_cluster(testing::hgx(16, FabricKind::fat_tree, 8, 3));
  auto shared = build_cluster(testing::hgx(16, FabricKind::fat_tree, 8, 3));
  std::vector<decltype(query(*serial, 0, 0))> expected;
  for (int a = 0; a < 128; a += 7) {
    for (int b = 0; b < 128; b += 5) expected.push_back(query(*serial, a, b));
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) {
        size_t i = 0;
        for (int a = 0; a < 128; a += 7) {
          for (int b = 0; b < 128; b += 5) mismatches[static_cast<size_t>(t)] += query(*shared, a, b) != expected[i++];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(Routing, ConcurrentQueriesGetTheSerialAnswers) {
  expect_concurrent_answers_are_serial(
      [](const Cluster& c, int a, int b) { return c.route(a, b, static_cast<uint64_t>(a * b)); });
}

// Every query's answer for a pair, in one fixed order of queries: routes by hash, by NIC slot,
// sprayed, and every equal-cost path.
struct PairAnswers {
  std::vector<std::vector<LinkId>> routes, nic_routes, sprayed, paths;
  bool operator==(const PairAnswers&) const = default;
};

// Four nodes on a 2-tier fat-tree: HGX (one nearest NIC a GPU: the router walks each route of a
// pair of them) and P5-like (four: it caches their routes).
std::vector<ClusterSpec> hgx_and_p5() {
  ClusterSpec p5 = hgx(4, FabricKind::fat_tree, 16, 2);
  p5.nic.count = 32;
  p5.nic.bandwidth = Bandwidth::gbps(100);
  return {hgx(4, FabricKind::fat_tree, 8, 2), p5};
}

// The router keeps a pair's plan only from its second route on (or where a NIC slot's pick reads
// it): routes asked first, with the plan made again on each later miss, and routes asked after
// the full path list (which keeps the plan at once) must be the same, and each one of the pair's
// least-cost paths.
TEST(Routing, RoutesDoNotDependOnWhatWasAskedOfThePairBefore) {
  for (const ClusterSpec& spec : hgx_and_p5()) {
    auto routes_first = build_cluster(spec);
    auto paths_first = build_cluster(spec);
    const auto ask = [](const Cluster& c, int a, int b, bool paths_first_order) {
      PairAnswers out;
      if (paths_first_order) out.paths = c.equal_cost_paths(a, b, 1 << 20);
      for (uint64_t h = 0; h < 6; ++h) out.routes.push_back(c.route(a, b, h * 7919));
      for (int nic = 0; nic < 3; ++nic) out.nic_routes.push_back(c.route_nic(a, b, 11, nic));
      out.sprayed = c.sprayed_routes(a, b, 5, 1, kSprayRoutes);
      if (!paths_first_order) out.paths = c.equal_cost_paths(a, b, 1 << 20);
      return out;
    };
    for (int a = 0; a < routes_first->gpu_count(); a += 3) {
      for (int b = 1; b < routes_first->gpu_count(); b += 5) {
        if (a == b) continue;
        const PairAnswers x = ask(*routes_first, a, b, false);
        EXPECT_EQ(x, ask(*paths_first, a, b, true)) << a << " -> " << b;
        const std::set<std::vector<LinkId>> all(x.paths.begin(), x.paths.end());
        for (const auto* list : {&x.routes, &x.nic_routes, &x.sprayed}) {
          for (const auto& r : *list) EXPECT_TRUE(all.count(r)) << a << " -> " << b;
        }
      }
    }
  }
}

// append_route appends what route() (or route_nic() with a slot) returns, whether the router
// walks the route on every query (one nearest NIC a GPU: HGX) or caches it (four: P5), asked
// first and again.
TEST(Routing, AppendedRoutesAreTheReturnedOnes) {
  for (const ClusterSpec& spec : hgx_and_p5()) {
    auto appended = build_cluster(spec);
    auto returned = build_cluster(spec);
    std::vector<LinkId> out;
    for (int rep = 0; rep < 2; ++rep) {
      for (int a = 0; a < appended->gpu_count(); a += 3) {
        for (int b = 1; b < appended->gpu_count(); b += 5) {
          for (int nic : {-1, 2}) {
            const uint64_t hash = static_cast<uint64_t>(a * 31 + b);
            out.assign(1, 777);  // what the caller had: kept
            appended->append_route(a, b, hash, nic, out);
            std::vector<LinkId> expected{777};
            const std::vector<LinkId> r = nic < 0 ? returned->route(a, b, hash) : returned->route_nic(a, b, hash, nic);
            expected.insert(expected.end(), r.begin(), r.end());
            EXPECT_EQ(out, expected) << a << " -> " << b << " slot " << nic;
          }
        }
      }
    }
  }
}

// Between GPUs with one nearest NIC each (HGX), spray() walks the pair's routes with no plan: they
// are the plan's, numbered as equal_cost_paths lists them (one route up to the NIC and one down,
// so a route's number is its fabric sub-index): the picked one (route()'s) and then, for n =
// min(K, routes), those floor(j * routes / n) places after it, j = 1 .. n - 1, wrapping.
TEST(Spraying, SingleExitPairsTakeTheEvenlySpacedRoutesOfTheirPlan) {
  for (const ClusterSpec& spec : {hgx(4, FabricKind::fat_tree, 16, 2), hgx(4, FabricKind::fat_tree, 8, 3)}) {
    auto c = build_cluster(spec);
    for (int a = 0; a < c->gpu_count(); a += 5) {
      for (int b = 8; b < c->gpu_count(); b += 3) {
        if (c->node_of(a) == c->node_of(b)) continue;
        const auto paths = c->equal_cost_paths(a, b, 1 << 20);
        const size_t count = paths.size();
        for (const size_t k : {size_t{3}, kSprayRoutes}) {
          for (uint64_t hash : {uint64_t{0}, uint64_t{77}, uint64_t{4099}}) {
            const auto routes = c->sprayed_routes(a, b, hash, -1, k);
            const size_t n = std::min(k, count);
            ASSERT_EQ(routes.size(), n) << a << " -> " << b;
            EXPECT_EQ(routes.front(), c->route(a, b, hash));
            const size_t first = static_cast<size_t>(std::find(paths.begin(), paths.end(), routes.front()) - paths.begin());
            ASSERT_LT(first, count);
            for (size_t j = 1; j < n; ++j) {
              EXPECT_EQ(routes[j], paths[(first + count / n * j + count % n * j / n) % count])
                  << a << " -> " << b << " hash " << hash << " route " << j;
            }
          }
        }
      }
    }
  }
}

// append_sprayed_routes adds sprayed_routes()' routes to the set, after what it held, route by
// route, whatever K, for pairs across nodes (sprayed) and inside one (one route); a cluster that
// only overrides sprayed_routes() gets the same from the default.
TEST(Spraying, AddedRoutesAreTheReturnedOnes) {
  // A cluster that answers sprayed_routes() and leaves append_sprayed_routes to the default.
  struct OnlyVectors final : Cluster {
    explicit OnlyVectors(const Cluster& c) : inner(c) {}
    const ClusterSpec& spec() const override { return inner.spec(); }
    std::span<const Device> devices() const override { return inner.devices(); }
    std::span<const Link> links() const override { return inner.links(); }
    int gpu_count() const override { return inner.gpu_count(); }
    DeviceId gpu_device(int gpu) const override { return inner.gpu_device(gpu); }
    std::vector<LinkId> route(int a, int b, uint64_t hash) const override { return inner.route(a, b, hash); }
    std::vector<std::vector<LinkId>> sprayed_routes(int a, int b, uint64_t hash, int nic, size_t k) const override {
      return inner.sprayed_routes(a, b, hash, nic, k);
    }
    const Cluster& inner;
  };
  for (const ClusterSpec& spec : hgx_and_p5()) {
    auto c = build_cluster(spec);
    const OnlyVectors by_default(*c);
    RouteSet out;
    for (int a = 0; a < c->gpu_count(); a += 3) {
      for (int b = 1; b < c->gpu_count(); b += 5) {
        for (int nic : {-1, 2}) {
          for (size_t k : {size_t{1}, size_t{3}, kSprayRoutes}) {
            const uint64_t hash = static_cast<uint64_t>(a * 31 + b);
            const auto routes = c->sprayed_routes(a, b, hash, nic, k);
            for (const Cluster* cluster : {static_cast<const Cluster*>(c.get()), static_cast<const Cluster*>(&by_default)}) {
              out.clear();
              out.add(std::vector<LinkId>{777, 778});  // what the caller had: kept
              cluster->append_sprayed_routes(a, b, hash, nic, k, out);
              ASSERT_EQ(out.size(), routes.size() + 1) << a << " -> " << b;
              EXPECT_EQ(std::vector<LinkId>(out[0].begin(), out[0].end()), (std::vector<LinkId>{777, 778}));
              for (size_t i = 0; i < routes.size(); ++i) {
                EXPECT_EQ(std::vector<LinkId>(out[i + 1].begin(), out[i + 1].end()), routes[i])
                    << a << " -> " << b << " slot " << nic << " k " << k << " route " << i;
              }
              EXPECT_EQ(out.links.size(), out.ends.back());
            }
          }
        }
      }
    }
  }
}

TEST(Spraying, ConcurrentQueriesGetTheSerialAnswers) {
  expect_concurrent_answers_are_serial([](const Cluster& c, int a, int b) {
    return c.sprayed_routes(a, b, static_cast<uint64_t>(a * b), a % 3 - 1, kSprayRoutes);
  });
}

}  // namespace
}  // namespace dtsim::topology
