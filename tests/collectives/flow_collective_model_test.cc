#include "collectives/flow_collective_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "collectives/analytical_model.h"
#include "collectives/network_plan.h"
#include "topology/cluster.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

topology::ClusterSpec h100(int nodes) {
  topology::ClusterSpec s = *topology::find_node_preset("hgx-h100");
  s.nodes = nodes;
  return s;
}

Communicator ranks(std::initializer_list<int> r) { return Communicator{std::vector<int>(r)}; }

Communicator first(int n) {
  Communicator c;
  for (int i = 0; i < n; ++i) c.ranks.push_back(i);
  return c;
}

CollectiveOptions ring_only() {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::simple;
  return o;
}

double ratio(const topology::ClusterSpec& spec, CollectiveKind kind, Bytes bytes, const Communicator& comm,
             CollectiveOptions options = ring_only()) {
  const FlowCollectiveModel flow(spec, options, {});
  return flow.estimate(kind, bytes, comm).time.seconds() / flow.analytical().estimate(kind, bytes, comm).time.seconds();
}

TEST(SiblingGroups, FillTheNodesTheCommunicatorSpans) {
  // One GPU per node on two nodes: the 7 other rails' groups run beside it.
  const auto dp = sibling_groups(ranks({0, 8}), 8, 16);
  ASSERT_EQ(dp.size(), 8u);
  EXPECT_EQ(dp[3].ranks, (std::vector<int>{3, 11}));
  // Two GPUs a node, adjacent: shifts that would overlap are skipped.
  const auto pairs = sibling_groups(ranks({0, 1, 8, 9}), 8, 16);
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[1].ranks, (std::vector<int>{2, 3, 10, 11}));
  // A whole node has no siblings.
  EXPECT_EQ(sibling_groups(first(8), 8, 16).size(), 1u);
}

// `racks` GB200 NVL72 racks as the rack preset (one node a rack), and as Slurm lists them (18
// trays of 4 GPUs and 4 NICs a rack, each rack one NVLink domain).
topology::ClusterSpec nvl72_racks(int racks) {
  topology::ClusterSpec s = *topology::find_node_preset("gb200-nvl72");
  s.nodes = racks;
  return s;
}
topology::ClusterSpec nvl72_trays(int racks) {
  topology::ClusterSpec s = nvl72_racks(racks);
  s.nodes = 18 * racks;
  s.gpus_per_node = 4;
  s.nic.count = 4;
  return s;
}

// An NVL72 rack written as 18 trays of 4 GPUs, as Slurm lists it, is one NVLink domain on flows
// as in closed form: its rings and exchanges run over NVLink, as on the one-node rack preset.
// (The graph had stamped out 18 separate trays: all_gather 183 against 615 GB/s busbw,
// all_to_all 49 against 714.)
TEST(FlowCollectiveModel, RackOfTraysRunsOverNvlinkAsTheRackPresetDoes) {
  CollectiveOptions auto_choice;
  const FlowCollectiveModel a(nvl72_racks(1), auto_choice, {}), b(nvl72_trays(1), auto_choice, {});
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::all_to_all, CollectiveKind::reduce_scatter}) {
    const double t_rack = a.estimate(kind, Bytes::gib(1), first(72)).time.seconds();
    const double t_trays = b.estimate(kind, Bytes::gib(1), first(72)).time.seconds();
    EXPECT_NEAR(t_trays / t_rack, 1.0, 0.02) << name(kind);
    EXPECT_NEAR(t_trays / b.analytical().estimate(kind, Bytes::gib(1), first(72)).time.seconds(), 1.0, 0.1) << name(kind);
  }
}

// A torus's or a dragonfly's router links run at one NIC's speed, so a ring between neighbours
// shares one link and an all-to-all crosses rings of links. The closed form prices the busiest
// link of each pattern (topology/fabric_load.h) and agrees with the flows routed over them; it
// had priced these fabrics as non-blocking, 5-7x too fast at 1 GiB (on flows a 2 x 4 torus ran
// all_gather 6.99x, tree all_reduce 5.0x and all_to_all 4.6x slower). Seven nodes make a 7 x 1
// torus, a ring of routers, where every route is unique: the pattern's equal split over
// equal-cost routes and the flows' hashed picks are the same.
TEST(FlowCollectiveModel, RouterLinksOfATorusOrDragonflyBoundTheClosedFormAsTheyBoundFlows) {
  topology::ClusterSpec torus = h100(7);
  torus.fabric.kind = topology::FabricKind::torus;
  torus.fabric.radix = 128;
  topology::ClusterSpec dragonfly = h100(8);
  dragonfly.fabric.kind = topology::FabricKind::dragonfly;
  dragonfly.fabric.radix = 32;  // a router a node, one group
  CollectiveOptions tree;
  tree.algorithm = Algorithm::tree;
  tree.protocol = Protocol::simple;
  for (const auto* spec : {&torus, &dragonfly}) {
    const char* fabric = spec == &torus ? "torus" : "dragonfly";
    const Communicator all = first(spec->total_gpus());
    EXPECT_NEAR(ratio(*spec, CollectiveKind::all_gather, Bytes::gib(1), all), 1.0, 0.1) << fabric;
    EXPECT_NEAR(ratio(*spec, CollectiveKind::all_to_all, Bytes::gib(1), all, CollectiveOptions{}), 1.0, 0.1) << fabric;
    EXPECT_NEAR(ratio(*spec, CollectiveKind::all_reduce, Bytes::gib(1), all, tree), 1.0, 0.15) << fabric;
    // A data-parallel group of one GPU a node: its copies on the node's other seven GPUs (the
    // flows run them beside it) cross the same router links, so each gets an eighth of them.
    Communicator dp;
    for (int r = 0; r < spec->total_gpus(); r += spec->gpus_per_node) dp.ranks.push_back(r);
    EXPECT_NEAR(ratio(*spec, CollectiveKind::all_gather, Bytes::gib(1), dp), 1.0, 0.1) << fabric;
  }
}

// Across two racks the trays' rack leaves through all its 72 NICs, as the rack preset's does:
// the closed form had counted one tray's four (an all_gather over 144 GPUs at 165 GB/s busbw
// against the preset's 525), and so had the collective sweep's lowering on flows.
TEST(FlowCollectiveModel, TwoRacksOfTraysCrossTheNetworkAsTwoRackPresetsDo) {
  // Four channels, not the tuner's: an all_to_all over 144 GPUs runs a transfer per pair and
  // channel, and the graphs compared do not depend on how many.
  CollectiveOptions auto_choice;
  auto_choice.channels = 4;
  const FlowCollectiveModel a(nvl72_racks(2), auto_choice, {}), b(nvl72_trays(2), auto_choice, {});
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::all_reduce, CollectiveKind::all_to_all}) {
    const double closed_racks = a.analytical().estimate(kind, Bytes::gib(1), first(144)).time.seconds();
    const double closed_trays = b.analytical().estimate(kind, Bytes::gib(1), first(144)).time.seconds();
    EXPECT_NEAR(closed_trays / closed_racks, 1.0, 1e-9) << name(kind);
    const double flow_racks = a.estimate(kind, Bytes::gib(1), first(144)).time.seconds();
    const double flow_trays = b.estimate(kind, Bytes::gib(1), first(144)).time.seconds();
    EXPECT_NEAR(flow_trays / flow_racks, 1.0, 0.02) << name(kind);
  }
  // A group of one GPU a rack runs beside its copies on the rack's other 71 GPUs, not only on its
  // tray's other three: on 4:1 oversubscribed leaves they share the uplinks.
  topology::ClusterSpec thin_racks = nvl72_racks(2), thin_trays = nvl72_trays(2);
  thin_racks.fabric.oversubscription = thin_trays.fabric.oversubscription = 4;
  const FlowCollectiveModel c(thin_racks, auto_choice, {}), d(thin_trays, auto_choice, {});
  const double per_rack = c.estimate(CollectiveKind::all_reduce, Bytes::gib(1), ranks({0, 72})).time.seconds();
  EXPECT_NEAR(d.estimate(CollectiveKind::all_reduce, Bytes::gib(1), ranks({0, 72})).time.seconds() / per_rack, 1.0,
              0.02);
}

TEST(FlowCollectiveModel, UncontendedRingMatchesTheClosedForm) {
  // Inside one node and across two full-bisection nodes a ring is bound by its own links, as the
  // analytical model says: the flow price agrees within a few percent.
  EXPECT_NEAR(ratio(h100(1), CollectiveKind::all_reduce, Bytes::gib(1), first(8)), 1.0, 0.05);
  EXPECT_NEAR(ratio(h100(2), CollectiveKind::all_reduce, Bytes::gib(1), first(16)), 1.0, 0.05);
  EXPECT_NEAR(ratio(h100(2), CollectiveKind::all_gather, Bytes::gib(1), first(16)), 1.0, 0.05);
}

TEST(FlowCollectiveModel, ChannelCapIsOnPayloadAsInTheClosedForm) {
  // Two LL channels on one H100 node: the channels, not NVLink, bound the ring, at 10.9 GB/s of
  // payload each in the closed form. The flows once capped the wire rate and then halved it for
  // LL's flags, and came out twice as slow.
  for (const Protocol proto : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
    CollectiveOptions o = ring_only();
    o.protocol = proto;
    o.channels = 2;
    EXPECT_NEAR(ratio(h100(1), CollectiveKind::all_reduce, Bytes::mib(64), first(8), o), 1.0, 0.05)
        << name(proto);
  }
}

// Without peer access (scale_up.kind: none) copies go through host memory, latency bound: a GPU
// pair's channels share the closed form's host-staged rate instead of running at the PCIe
// links' rate (which made flows 5-20x faster than the closed form and the measurements).
TEST(FlowCollectiveModel, HostStagedCopiesShareTheClosedFormsRate) {
  topology::ClusterSpec spec = *topology::find_node_preset("pcie-server");
  spec.gpus_per_node = 4;
  spec.scale_up.kind = topology::ScaleUpKind::none;
  spec.scale_up.latency = Time::us(6);
  EXPECT_NEAR(ratio(spec, CollectiveKind::all_reduce, Bytes::mib(256), first(4)), 1.0, 0.05);
}

TEST(FlowCollectiveModel, SiblingGroupsShareTheNics) {
  // A data-parallel group of one GPU per node: with a NIC per GPU the eight groups use eight
  // rails; with one NIC per node they queue on it, about 8x slower. (The analytical model gives a
  // lone rank a whole NIC, right for a 2-rank benchmark, optimistic for a training job's DP.)
  topology::ClusterSpec rails = h100(2);
  topology::ClusterSpec one_nic = h100(2);
  one_nic.nic.count = 1;
  const FlowCollectiveModel a(rails, ring_only(), {}), b(one_nic, ring_only(), {});
  const Communicator dp = ranks({0, 8});
  const double t_rails = a.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time.seconds();
  const double t_one = b.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time.seconds();
  EXPECT_NEAR(t_one / t_rails, 8.0, 1.0);
  EXPECT_NEAR(ratio(rails, CollectiveKind::all_reduce, Bytes::gib(1), dp), 1.0, 0.05);
}

TEST(FlowCollectiveModel, AnOversubscribedFabricSlowsCrossLeafTraffic) {
  // 64 nodes on a 2-tier fat-tree of radix 32: nodes 0 and 63 sit on different leaves. At 4:1 a
  // leaf has 24 ports down (3 nodes) and 6 up, so the eight rails' rings (the group and its
  // siblings) leave node 0 through 6 uplinks instead of 8 NICs' worth: 4/3 the time once sprayed
  // evenly over them. Hashed, their transfers also collide on the uplinks.
  topology::ClusterSpec full = h100(64);
  full.fabric.kind = topology::FabricKind::fat_tree;
  full.fabric.tiers = 2;
  full.fabric.radix = 32;
  topology::ClusterSpec thin = full;
  thin.fabric.oversubscription = 4;
  Communicator dp = ranks({0, 63 * 8});
  auto seconds = [&](const topology::ClusterSpec& spec) {
    return FlowCollectiveModel(spec, ring_only(), {}).estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp)
        .time.seconds();
  };
  EXPECT_GT(seconds(thin) / seconds(full), 4.0 / 3.0);
  full.fabric.routing = thin.fabric.routing = topology::Routing::adaptive;
  EXPECT_NEAR(seconds(thin) / seconds(full), 4.0 / 3.0, 0.02);
  // The closed form prices a two-node job on the cluster's first nodes, which share a leaf.
  EXPECT_LT(AnalyticalCollectiveModel(thin, ring_only(), {}).estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp)
                    .time.seconds() /
                AnalyticalCollectiveModel(full, ring_only(), {})
                    .estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp)
                    .time.seconds(),
            1.2);
}

// Two AWS P5 nodes: 32 x 100 Gb/s EFA NICs a node, each node's NICs filling one leaf of a
// radix-64 fat-tree, 32 spines. Hashed onto one spine each, the 32 rings' flows collide on leaf
// uplinks and the all_reduce runs well behind the closed form; sprayed over all 32 spines, the
// uplinks carry even loads and the flows run at the NICs' rate, as the closed form assumes.
TEST(FlowCollectiveModel, AdaptiveRoutingRemovesEcmpCollisionsOnP5) {
  topology::ClusterSpec p5 = h100(2);
  p5.nic = {.kind = topology::NicKind::efa, .count = 32, .bandwidth = Bandwidth::gbps(100), .latency = Time::us(5)};
  p5.fabric.link.bandwidth = Bandwidth::gbps(100);
  p5.fabric.routing = topology::Routing::adaptive;
  EXPECT_NEAR(ratio(p5, CollectiveKind::all_reduce, Bytes::gib(1), first(16)), 1.0, 0.02);
  p5.fabric.routing = topology::Routing::ecmp;
  EXPECT_GT(ratio(p5, CollectiveKind::all_reduce, Bytes::gib(1), first(16)), 1.15);
}

// The channel cap limits a channel, not each of its paths: where it binds (1 GB/s a channel,
// far below a NIC), a sprayed ring is exactly as fast as a hashed one. A DP group of one GPU per
// node (and its siblings) has only cross-node flows; at radix 8 the two nodes' NICs sit under
// different leaves joined by 4 spines.
TEST(FlowCollectiveModel, SprayedSubFlowsShareTheirChannelsCap) {
  topology::ClusterSpec spec = h100(2);
  spec.fabric.radix = 8;
  ModelParameters slow;
  slow.channel_bandwidth = 1.0;
  CollectiveOptions two = ring_only();
  two.channels = 2;
  auto seconds = [&](topology::Routing routing) {
    spec.fabric.routing = routing;
    const FlowCollectiveModel m(spec, two, slow);
    return m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), ranks({0, 8})).time.seconds();
  };
  const double ecmp = seconds(topology::Routing::ecmp);
  EXPECT_NEAR(seconds(topology::Routing::adaptive), ecmp, 1e-6 * ecmp);
}

// The longest notice between any two members of `comm` (network_plan.h): what a member waits to
// hear that all have arrived.
Time longest_notice(const topology::Cluster& cluster, const Communicator& comm) {
  Time t;
  for (int a : comm.ranks) {
    for (int b : comm.ranks) t = std::max(t, notice_latency(cluster, a, b));
  }
  return t;
}

// NVLS reduces in the switch, which flows between GPUs cannot express; inside one NVLink domain
// its traffic meets no other communicator's, so it keeps the closed form's price, counted from
// when every member has heard that the others arrived.
TEST(FlowCollectiveModel, NvlsInsideOneDomainKeepsTheClosedFormPrice) {
  const FlowCollectiveModel m(h100(1), {}, {});
  const AnalyticalCollectiveModel closed(h100(1), {}, {});
  const CollectiveEstimate e = m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), first(8));
  EXPECT_EQ(e.algorithm, Algorithm::nvls);
  const auto cluster = topology::build_cluster(h100(1));
  const Time heard = longest_notice(*cluster, first(8));
  EXPECT_GT(heard, Time::zero());
  EXPECT_EQ(e.time, closed.estimate(CollectiveKind::all_reduce, Bytes::gib(1), first(8)).time + heard);
}

// PAT has no lowering: the flows run the ring (the only lowering all_gather has) with the
// protocol the closed form prices cheapest, not PAT's Simple.
TEST(FlowCollectiveModel, AlgorithmsWithoutALoweringRunAsTheCheapestRingOrTree) {
  CollectiveOptions o;
  o.algorithm = Algorithm::pat;
  const FlowCollectiveModel m(h100(4), o, {});
  const AnalyticalCollectiveModel closed(h100(4), o, {});
  const Communicator rails = ranks({0, 8, 16, 24});
  const Bytes size = Bytes::kib(64);
  ASSERT_EQ(closed.estimate(CollectiveKind::all_gather, size, rails).algorithm, Algorithm::pat);
  Protocol proto = Protocol::simple;
  double best = 1e300;
  for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
    const double us = closed.price(CollectiveKind::all_gather, size, rails, Algorithm::ring, p)
                          .time_us(size.as_double());
    if (us < best) best = us, proto = p;
  }
  const CollectiveEstimate e = m.estimate(CollectiveKind::all_gather, size, rails);
  EXPECT_EQ(e.algorithm, Algorithm::ring);
  EXPECT_EQ(e.protocol, proto);
  EXPECT_NE(e.protocol, Protocol::simple);
  // The fallback keeps to the protocols the scenario allows (NCCL_PROTO=^LL,LL128 here).
  CollectiveOptions simple_only = o;
  simple_only.protocols = {Protocol::simple};
  EXPECT_EQ(FlowCollectiveModel(h100(4), simple_only, {})
                .estimate(CollectiveKind::all_gather, size, rails)
                .protocol,
            Protocol::simple);
}

// NVLS-tree across nodes runs its network part as flows (each node's GPU k carries part k of the
// buffer over its NIC through a tree of the nodes) and keeps the closed form's price for the
// in-switch part: alone on the fabric it costs what the closed form says; beside copies of
// itself on 4:1 oversubscribed leaves the network part sets a longer time than the closed
// form's, which charges the oversubscription but not the copies.
TEST(FlowCollectiveModel, NvlsTreeRunsItsNetworkPartAsFlowsAndNeverBeatsTheClosedForm) {
  const Bytes size = Bytes::gib(1);
  const AnalyticalCollectiveModel closed(h100(2), {}, {});
  const CollectiveEstimate c = closed.estimate(CollectiveKind::all_reduce, size, first(16));
  ASSERT_EQ(c.algorithm, Algorithm::nvls_tree);
  const FlowCollectiveModel alone(h100(2), {}, {});
  const CollectiveEstimate e = alone.estimate(CollectiveKind::all_reduce, size, first(16));
  EXPECT_EQ(e.algorithm, Algorithm::nvls_tree);
  // The closed form's time is the floor every member reaches; the members then end together
  // through the lowest GPU: a notice to it and one back (network_plan.h).
  const auto two = topology::build_cluster(h100(2));
  Time to_leader, from_leader;
  for (int g = 0; g < 16; ++g) {
    to_leader = std::max(to_leader, notice_latency(*two, g, 0));
    from_leader = std::max(from_leader, notice_latency(*two, 0, g));
  }
  EXPECT_EQ(e.time, c.time + to_leader + from_leader);

  topology::ClusterSpec busy = h100(8);
  busy.fabric.kind = topology::FabricKind::fat_tree;
  busy.fabric.radix = 16;
  busy.fabric.oversubscription = 4;
  CollectiveOptions o;
  o.algorithm = Algorithm::nvls_tree;
  const FlowCollectiveModel crowded(busy, o, {}, nullptr, 1, 16);
  const CollectiveEstimate b = crowded.estimate(CollectiveKind::all_reduce, size, first(16));
  const CollectiveEstimate bc =
      AnalyticalCollectiveModel(busy, o, {}).estimate(CollectiveKind::all_reduce, size, first(16));
  EXPECT_EQ(b.algorithm, Algorithm::nvls_tree);
  // The closed form charges the 4:1 uplinks (13.2 ms against 4.6 alone); the three copies
  // crossing the same uplinks take 17.5 ms on flows.
  EXPECT_GT(b.time.seconds(), 1.2 * bc.time.seconds());
}

// prepare() prices a workload's distinct collectives several at a time, sharing the router
// between threads: each estimate is what a model asked one collective at a time gives, bit for
// bit, a collective handed over twice included.
TEST(FlowCollectiveModel, PreparedOnFourThreadsGivesTheSerialEstimates) {
  topology::ClusterSpec spec = h100(4);
  spec.fabric.kind = topology::FabricKind::fat_tree;
  spec.fabric.radix = 8;
  const std::vector<Communicator> comms = {first(8), ranks({0, 8, 16, 24}), ranks({3, 11}), first(32)};
  std::vector<CollectiveQuery> queries;
  for (const Communicator& c : comms) {
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather}) {
      for (Bytes b : {Bytes::mib(1), Bytes::gib(1)}) queries.push_back({kind, b, &c});
    }
  }
  queries.push_back(queries.front());
  const FlowCollectiveModel serial(spec, {}, {});
  FlowCollectiveModel parallel(spec, {}, {}, nullptr, /*threads=*/4);
  // The progress hook hears the total first, then each distinct collective once.
  std::mutex heard_mutex;
  std::vector<std::pair<size_t, size_t>> heard;
  parallel.set_on_priced([&](size_t done, size_t total) {
    const std::lock_guard lock(heard_mutex);
    heard.emplace_back(done, total);
    return true;
  });
  parallel.prepare(queries);
  ASSERT_EQ(heard.size(), queries.size());  // (0, 16), then 16 distinct of the 17 queries
  EXPECT_EQ(heard.front(), (std::pair<size_t, size_t>{0, queries.size() - 1}));
  std::set<size_t> done;
  for (size_t i = 1; i < heard.size(); ++i) done.insert(heard[i].first);
  EXPECT_EQ(done.size(), queries.size() - 1);
  EXPECT_EQ(*done.rbegin(), queries.size() - 1);
  for (const CollectiveQuery& q : queries) {
    const CollectiveEstimate a = serial.estimate(q.kind, q.bytes, *q.comm);
    const CollectiveEstimate b = parallel.estimate(q.kind, q.bytes, *q.comm);
    EXPECT_EQ(b.time, a.time);
    EXPECT_EQ(b.algorithm, a.algorithm);
    EXPECT_EQ(b.channels, a.channels);
  }
}

// A hook that says stop after the third collective stops the pricing there: prepare() throws
// PricingStopped counting what it priced (those running when it said stop finish), and what was
// priced is kept.
TEST(FlowCollectiveModel, PricingStopsWhenTheHookSaysSo) {
  topology::ClusterSpec spec = h100(4);
  const Communicator comm = first(32);
  std::vector<CollectiveQuery> queries;
  for (int64_t kib = 1; kib <= 1024; kib *= 2) queries.push_back({CollectiveKind::all_reduce, Bytes::kib(kib), &comm});
  FlowCollectiveModel model(spec, {}, {}, nullptr, /*threads=*/2);
  model.set_on_priced([](size_t done, size_t) { return done < 3; });
  try {
    model.prepare(queries);
    ADD_FAILURE() << "prepare() went on past the hook's stop";
  } catch (const PricingStopped& e) {
    EXPECT_GE(e.priced(), 3u);
    EXPECT_LE(e.priced(), 4u);  // the other thread's collective finishes
    EXPECT_EQ(e.total(), queries.size());
  }
  // Only those were priced: the rest of the queries cost more solves again.
  const uint64_t stopped = model.solves();
  EXPECT_GT(stopped, 0u);
  model.set_on_priced(nullptr);
  model.prepare(queries);
  EXPECT_GT(model.solves(), stopped);
  const FlowCollectiveModel fresh(spec, {}, {});
  EXPECT_EQ(model.estimate(queries[0].kind, queries[0].bytes, comm).time,
            fresh.estimate(queries[0].kind, queries[0].bytes, comm).time);
}

}  // namespace
}  // namespace dtsim::collectives

namespace dtsim::collectives {
namespace {

TEST(FlowCollectiveModel, ReplicasSharingALeafSlowTheJobsCrossLeafTraffic) {
  // 12 nodes on a 2-tier fat-tree of radix 32 at 4:1: 24 NICs, 3 nodes, a leaf. A job of 4 nodes
  // (leaf 0 and the first node of leaf 1), its data-parallel ring over one GPU a node; its copies
  // take nodes 4-7 and 8-11 and run their rings at the same moment. The first copy's ring also
  // leaves leaf 1, through the 6 uplinks the job's uses: sprayed evenly, 16 rails' rings on them
  // instead of 8, twice the time.
  topology::ClusterSpec spec = h100(12);
  spec.fabric.kind = topology::FabricKind::fat_tree;
  spec.fabric.tiers = 2;
  spec.fabric.radix = 32;
  spec.fabric.oversubscription = 4;
  spec.fabric.routing = topology::Routing::adaptive;
  const Communicator dp = ranks({0, 8, 16, 24});
  const FlowCollectiveModel alone(spec, ring_only(), {}), crowded(spec, ring_only(), {}, nullptr, 1, 32);
  const double t_alone = alone.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time.seconds();
  const double t_crowded = crowded.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time.seconds();
  EXPECT_NEAR(t_crowded / t_alone, 2.0, 0.03);
  // A job that fills the cluster has no copies; one that fills its leaf shares no link with its.
  const FlowCollectiveModel full(spec, ring_only(), {}, nullptr, 1, 96);
  EXPECT_EQ(full.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time, alone.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time);
  const Communicator leaf = ranks({0, 8, 16});
  const FlowCollectiveModel leaf_job(spec, ring_only(), {}, nullptr, 1, 24);
  EXPECT_EQ(leaf_job.estimate(CollectiveKind::all_reduce, Bytes::gib(1), leaf).time,
            alone.estimate(CollectiveKind::all_reduce, Bytes::gib(1), leaf).time);
}

}  // namespace
}  // namespace dtsim::collectives
