#include "collectives/analytical_model.h"

#include <gtest/gtest.h>

#include "sim/error.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

topology::ClusterSpec preset(std::string_view name, int nodes) {
  auto s = *topology::find_node_preset(name);
  s.nodes = nodes;
  return s;
}

constexpr CollectiveKind kAll[] = {CollectiveKind::all_reduce,     CollectiveKind::all_gather,
                                   CollectiveKind::reduce_scatter, CollectiveKind::broadcast,
                                   CollectiveKind::reduce,         CollectiveKind::all_to_all,
                                   CollectiveKind::send_recv};

TEST(AnalyticalModel, OneRankPerNodeGetsItsOwnNicNotTheWholeNode) {
  // Eight GPUs on eight HGX H100 nodes (one each): the other seven GPUs of every node use their
  // own NICs, so this communicator's large all_gather runs at about one 400 Gb/s NIC per rank,
  // far below the same ranks packed in one node on NVLink.
  AnalyticalCollectiveModel model(preset("hgx-h100", 8), {}, ModelParameters{});
  Communicator packed, spread;
  for (int i = 0; i < 8; ++i) {
    packed.ranks.push_back(i);
    spread.ranks.push_back(8 * i);
  }
  const Bytes size = Bytes::gib(1);
  const double busbw_spread = size.as_double() * 7 / 8 /
                              model.estimate(CollectiveKind::all_gather, size, spread).time.seconds() * 1e-9;
  EXPECT_LT(busbw_spread, 50.0);
  EXPECT_GT(busbw_spread, 30.0);
  EXPECT_GT(model.estimate(CollectiveKind::all_gather, size, spread).time,
            model.estimate(CollectiveKind::all_gather, size, packed).time * 4);
}

TEST(AnalyticalModel, TimeNeverDecreasesWithSize) {
  for (auto p : {"hgx-h100", "hgx-a100", "pcie-server", "gb200-nvl72"}) {
    for (int nodes : {1, 2, 16}) {
      const AnalyticalCollectiveModel m(preset(p, nodes), {}, {});
      const auto w = m.world();
      for (auto k : kAll) {
        Time prev = Time::zero();
        for (int64_t b = 8; b <= (int64_t{1} << 34); b *= 2) {
          const Time t = m.estimate(k, Bytes(b), w).time;
          EXPECT_GE(t, prev) << p << " nodes " << nodes << " " << name(k) << " " << b;
          prev = t;
        }
      }
    }
  }
}

// A send/recv across nodes streams through the p2p FIFO chunk by chunk: its closed form is the
// wire time plus one NCCL_P2P_NET_CHUNKSIZE chunk (and the latency), not plus a whole FIFO. Inside
// a node it keeps the fitted intercept of 8 x A100 sendrecv_perf (p2p_pipeline_bytes).
TEST(AnalyticalModel, SendRecvAcrossNodesPaysOneChunkNotAFifo) {
  const ModelParameters p;
  const AnalyticalCollectiveModel two(preset("hgx-h100", 2), {}, p);
  const Communicator pair{{0, 8}};
  const auto cost = two.price(CollectiveKind::send_recv, Bytes(10'000'000), pair, Algorithm::p2p,
                              Protocol::simple);
  const double bytes_per_us = cost.algbw_gbytes * 1e3;
  EXPECT_NEAR(cost.fill_us, p.p2p_net_chunk_bytes / bytes_per_us, 1e-9);
  EXPECT_LT(cost.fill_us, 0.02 * 10'000'000 / bytes_per_us);

  const AnalyticalCollectiveModel one(preset("hgx-h100", 1), {}, p);
  const Communicator mates{{0, 1}};
  const auto inside = one.price(CollectiveKind::send_recv, Bytes(10'000'000), mates, Algorithm::p2p,
                                Protocol::simple);
  EXPECT_NEAR(inside.fill_us, p.p2p_pipeline_bytes / (inside.algbw_gbytes * 1e3), 1e-9);
}

TEST(AnalyticalModel, LargeRingAllReduceApproachesTheNvlinkBound) {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel m(preset("hgx-a100", 1), o, {});
  const auto w = m.world();
  const Bytes b = Bytes::gib(16);
  const double bus =
      b.as_double() / m.estimate(CollectiveKind::all_reduce, b, w).time.seconds() * 1e-9 * 1.75;
  EXPECT_NEAR(bus, 300 * ModelParameters{}.nvlink_efficiency, 5);
}

TEST(AnalyticalModel, MoreNodesNeverMakeAnAllReduceFaster) {
  Time prev = Time::zero();
  for (int nodes : {1, 2, 4, 8, 16, 32}) {
    const AnalyticalCollectiveModel m(preset("hgx-h100", nodes), {}, {});
    const Time t = m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), m.world()).time;
    EXPECT_GE(t, prev) << nodes;
    prev = t;
  }
}

// 4:1 leaves of radix 16 (12 ports down, 4 up) under 16 nodes of 8 NICs: what crosses a leaf has
// a third of its NICs' rate or less. Rings and all-to-alls across the nodes slow down by about
// 2x and 3.7x at 1 GiB, as on flows (1.98x, 3.69x; FlowCollectiveModel tests check the match).
TEST(AnalyticalModel, OversubscribedFabricSlowsCrossLeafTraffic) {
  auto s = preset("hgx-h100", 16);
  s.fabric.radix = 16;
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel full(s, o, {});
  s.fabric.oversubscription = 4;
  const AnalyticalCollectiveModel over(s, o, {});
  const auto w = full.world();
  auto slowdown = [&](CollectiveKind kind) {
    return over.estimate(kind, Bytes::gib(1), w).time.seconds() / full.estimate(kind, Bytes::gib(1), w).time.seconds();
  };
  EXPECT_GT(slowdown(CollectiveKind::all_reduce), 1.8);
  EXPECT_GT(slowdown(CollectiveKind::all_to_all), 3.0);
}

TEST(AnalyticalModel, SubCommunicatorInsideANodeAvoidsTheNetwork) {
  const AnalyticalCollectiveModel m(preset("hgx-h100", 4), {}, {});
  const Communicator tp{{8, 9, 10, 11, 12, 13, 14, 15}};
  const Communicator dp{{0, 8, 16, 24}};
  EXPECT_LT(m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), tp).time,
            m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), dp).time);
}

TEST(AnalyticalModel, UnorderedRanksGiveTheSameShapeAsOrderedOnes) {
  const AnalyticalCollectiveModel m(preset("hgx-h100", 4), {}, {});
  EXPECT_EQ(
      m.estimate(CollectiveKind::all_gather, Bytes::mib(8), Communicator{{24, 0, 16, 8}}).time,
      m.estimate(CollectiveKind::all_gather, Bytes::mib(8), Communicator{{0, 8, 16, 24}}).time);
}

// PAT (one GPU a node) drives all its node's NICs, as a ring of one GPU a node does. Pricing a
// torus's links for it had capped it at one NIC on every fabric: 8 one-GPU nodes with 8 x 400 Gb/s
// NICs each ran a 1 GiB all_gather at 47 GB/s busbw, a ring's share of 8 NICs being ~330.
TEST(AnalyticalModel, PatDrivesTheNodesNicsAsARingDoes) {
  auto s = preset("hgx-h100", 8);
  s.gpus_per_node = 1;
  s.scale_up.domain_gpus = 1;
  CollectiveOptions pat, ring;
  pat.algorithm = Algorithm::pat;
  ring.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel a(s, pat, {}), b(s, ring, {});
  const double t_pat = a.estimate(CollectiveKind::all_gather, Bytes::gib(1), a.world()).time.seconds();
  const double t_ring = b.estimate(CollectiveKind::all_gather, Bytes::gib(1), b.world()).time.seconds();
  EXPECT_NEAR(t_pat / t_ring, 1.0, 0.1);
}

TEST(AnalyticalModel, SingleRankCollectiveCostsOnlyItsLaunch) {
  const AnalyticalCollectiveModel m(preset("hgx-h100", 1), {}, {});
  EXPECT_LT(m.estimate(CollectiveKind::all_reduce, Bytes::gib(1), Communicator{{3}}).time,
            Time::us(40));
}

TEST(AnalyticalModel, PriceRefusesAnAlgorithmTheHardwareLacks) {
  const AnalyticalCollectiveModel m(preset("hgx-a100", 1), {}, {});
  EXPECT_THROW(m.price(CollectiveKind::all_reduce, Bytes::mib(1), m.world(), Algorithm::nvls,
                       Protocol::simple),
               InputError);
}

TEST(AnalyticalModel, HalvingDoublingAndHierarchicalRunWhenAsked) {
  const AnalyticalCollectiveModel m(preset("hgx-h100", 4), {}, {});
  const auto w = m.world();
  const auto hd = m.price(CollectiveKind::all_reduce, Bytes::mib(64), w,
                          Algorithm::halving_doubling, Protocol::simple);
  const auto h2 = m.price(CollectiveKind::all_reduce, Bytes::mib(64), w, Algorithm::hierarchical,
                          Protocol::simple);
  EXPECT_GT(hd.time_us(64.0 * (1 << 20)), 0);
  EXPECT_GT(h2.time_us(64.0 * (1 << 20)), 0);
}

TEST(AnalyticalModel, SlowerNicKindCostsMoreLatency) {
  auto ib = preset("hgx-a100", 2);
  auto efa = ib;
  efa.nic.kind = topology::NicKind::efa;
  const AnalyticalCollectiveModel a(ib, {}, {});
  const AnalyticalCollectiveModel b(efa, {}, {});
  EXPECT_LT(a.estimate(CollectiveKind::all_reduce, Bytes(8), a.world()).time,
            b.estimate(CollectiveKind::all_reduce, Bytes(8), b.world()).time);
}

}  // namespace
}  // namespace dtsim::collectives
