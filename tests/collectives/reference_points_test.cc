// Sanity bounds from NCCL maintainers' statements (validation/measured/
// reference_points_from_issues.csv): the default parameters must land near them.
#include <gtest/gtest.h>

#include <utility>

#include "collectives/analytical_model.h"
#include "topology/catalog.h"

namespace dtsim::collectives {
namespace {

topology::ClusterSpec node(std::string_view preset, int nodes) {
  topology::ClusterSpec s = *topology::find_node_preset(preset);
  s.nodes = nodes;
  return s;
}

double busbw(const AnalyticalCollectiveModel& m, CollectiveKind k, Bytes b) {
  const Communicator w = m.world();
  const auto e = m.estimate(k, b, w);
  return b.as_double() / e.time.seconds() * 1e-9 * busbw_factor(k, w.size());
}

CollectiveOptions forced(Algorithm algorithm, Protocol protocol, int channels) {
  CollectiveOptions o;
  o.algorithm = algorithm, o.protocol = protocol, o.channels = channels;
  return o;
}

// Bus bandwidth of `k` at `b` on one node of `preset` and across two, with options `o`.
std::pair<double, double> inside_and_across(std::string_view preset, const CollectiveOptions& o,
                                            CollectiveKind k, Bytes b) {
  const AnalyticalCollectiveModel one(node(preset, 1), o, {});
  const AnalyticalCollectiveModel two(node(preset, 2), o, {});
  return {busbw(one, k, b), busbw(two, k, b)};
}

TEST(ReferencePoints, H100RingAllReduceReachesAbout370GBpsBusBandwidth) {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel m(node("hgx-h100", 1), o, {});
  EXPECT_NEAR(busbw(m, CollectiveKind::all_reduce, Bytes::gib(8)), 370, 370 * 0.08);
}

TEST(ReferencePoints, H100NvlsAllReduceReachesAbout480GBpsBusBandwidth) {
  const AnalyticalCollectiveModel m(node("hgx-h100", 1), {}, {});
  EXPECT_EQ(m.estimate(CollectiveKind::all_reduce, Bytes::gib(8), m.world()).algorithm,
            Algorithm::nvls);
  EXPECT_NEAR(busbw(m, CollectiveKind::all_reduce, Bytes::gib(8)), 480, 480 * 0.08);
}

TEST(ReferencePoints, TwoNodeRingOnFourHdrNicsReachesAbout95GBpsBusBandwidth) {
  auto spec = node("hgx-a100", 2);
  spec.nic.count = 4;
  spec.nic.bandwidth = Bandwidth::gbps(200);
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel m(spec, o, {});
  EXPECT_NEAR(busbw(m, CollectiveKind::all_reduce, Bytes::gib(8)), 95.1, 95.1 * 0.08);
}

TEST(ReferencePoints, AllToAllBusBandwidthIsNodesOverNodesMinusOneTimesTheNicRate) {
  // NVIDIA (nccl-tests#130): alltoall busBw ~= N/(N-1) x the per-GPU network bandwidth, with
  // N nodes; one flow cannot spread over several NICs (nccl-tests#267: 48-49 GB/s per CX-7).
  const AnalyticalCollectiveModel m(node("hgx-h100", 6), {}, {});
  const double nic = 50 * ModelParameters{}.net_efficiency_infiniband;
  const double bw = busbw(m, CollectiveKind::all_to_all, Bytes::gib(4));
  EXPECT_NEAR(bw, 6.0 / 5.0 * nic * 47.0 / 48.0, 0.05 * nic);
}

TEST(ReferencePoints, H100AllToAllInsideANodeReachesAbout336GBpsBusBandwidth) {
  // NVIDIA/nccl#2169: alltoall_perf on 4 H100s of one NVSwitch node, NCCL 2.23.4, 500 MB:
  // 335-338 GB/s busbw (validation/extra/h100_4gpu_alltoall.txt). The exchange reaches about the
  // ring's rate, above what one send/recv pair gets (p2p_efficiency).
  const AnalyticalCollectiveModel m(node("hgx-h100", 1), {}, {});
  const Communicator four{{0, 1, 2, 3}};
  const Bytes size(524288000);
  const double bw = size.as_double() / m.estimate(CollectiveKind::all_to_all, size, four).time.seconds() * 1e-9 *
                    busbw_factor(CollectiveKind::all_to_all, 4);
  EXPECT_NEAR(bw, 336, 336 * 0.05);
}

// NCCL's own model caps LL's bus bandwidth across two x86 nodes at 39 GB/s and inside one Hopper
// node at 141 (llMaxBws, docs/nccl-tuning-model.md): an LL channel whose ring crosses
// the network moves far less than one on NVLink. The closed form's LL cap is channels x
// ll_net_channel_bandwidth across nodes, channels x ll_channel_bandwidth_sm90 inside one (Hopper).
TEST(ReferencePoints, LlAcrossNodesIsCappedNearNcclsOwnLlLimit) {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::ll;
  o.channels = 16;
  const ModelParameters p;
  const auto [inside, across] =
      inside_and_across("hgx-h100", o, CollectiveKind::all_gather, Bytes::gib(1));
  EXPECT_NEAR(across, 16 * p.ll_net_channel_bandwidth, 0.05 * 16 * p.ll_net_channel_bandwidth);
  EXPECT_NEAR(across, 39, 39 * 0.2);
  EXPECT_NEAR(inside, 16 * p.ll_channel_bandwidth_sm90, 0.05 * 16 * p.ll_channel_bandwidth_sm90);
  EXPECT_GT(inside, 4 * across);
}

// NCCL's own model caps LL inside one node per GPU generation (llMaxBws: 87.7 GB/s of busbw on
// Ampere, 141 on Hopper): an LL channel inside an A100 node moves ll_channel_bandwidth, one inside
// an H100 node ll_channel_bandwidth_sm90, each whatever the other is.
TEST(ReferencePoints, LlInsideANodeMovesAtItsGenerationsChannelRate) {
  ModelParameters p;
  p.ll_channel_bandwidth = 4;
  p.ll_channel_bandwidth_sm90 = 9;
  const CollectiveOptions ll = forced(Algorithm::ring, Protocol::ll, 16);
  const AnalyticalCollectiveModel a100(node("hgx-a100", 1), ll, p);
  EXPECT_NEAR(busbw(a100, CollectiveKind::all_gather, Bytes::gib(1)), 16 * 4.0, 0.05 * 16 * 4.0);
  const AnalyticalCollectiveModel h100(node("hgx-h100", 1), ll, p);
  EXPECT_NEAR(busbw(h100, CollectiveKind::all_gather, Bytes::gib(1)), 16 * 9.0, 0.05 * 16 * 9.0);
}

// NCCL's own model rates a Simple tree channel per node count (perChMaxTreeBws): the chain
// inside one node moves tree_channel_bandwidth a channel, a tree across nodes
// tree_net_channel_bandwidth, each whatever the other is.
TEST(ReferencePoints, TreeChannelRateInsideANodeIsApartFromAcrossNodes) {
  ModelParameters p;
  p.tree_channel_bandwidth = 5;
  p.tree_net_channel_bandwidth = 3;
  const Bytes size = Bytes::gib(4);
  const auto algbw = [&](int nodes) {
    const AnalyticalCollectiveModel m(node("hgx-h100", nodes), forced(Algorithm::tree, Protocol::simple, 8), p);
    return size.as_double() / m.estimate(CollectiveKind::all_reduce, size, m.world()).time.seconds() * 1e-9;
  };
  EXPECT_NEAR(algbw(1), 8 * 5.0, 0.05 * 8 * 5.0);
  EXPECT_NEAR(algbw(2), 8 * 3.0, 0.05 * 8 * 3.0);
}

// nccl-tests#309 (validation/extra/h100_2node_ndr_ring_allreduce.txt): a ring all_reduce forced
// over 2 x 8 H100 with 8 x 400G NDR each reaches 392 GB/s busbw at 8 GiB, above the 360 a ring
// inside one node reaches. Across nodes one of each node's 8 ring edges per channel leaves
// through a NIC, so each GPU's NVLink carries 7/8 of the ring's bytes and the network (400 GB/s
// line) is the limit.
TEST(ReferencePoints, RingAcrossNodesIsBoundByTheNetworkNotTheSingleNodeNvlinkRate) {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  o.channels = 24;
  const ModelParameters p;
  const auto [inside, across] =
      inside_and_across("hgx-h100", o, CollectiveKind::all_reduce, Bytes::gib(8));
  EXPECT_GT(across, inside * 1.02);
  EXPECT_NEAR(across, 400 * p.net_efficiency_infiniband, 400 * 0.02);
  EXPECT_NEAR(across, 392, 392 * 0.06);
}

// DeepSeek-V3's technical report (section 3.2.2): on its H800 nodes "NVLink offers a bandwidth
// of 160 GB/s, roughly 3.2 times that of IB (50 GB/s)". The hgx-h800 preset's ring inside a node
// and its one-NIC rate across nodes land there.
TEST(ReferencePoints, H800NvlinkIsAbout160GBpsAndAbout3TimesOneNic) {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  const AnalyticalCollectiveModel one(node("hgx-h800", 1), o, {});
  const double nvlink = busbw(one, CollectiveKind::all_reduce, Bytes::gib(8));
  EXPECT_NEAR(nvlink, 160, 160 * 0.05);
  const AnalyticalCollectiveModel two(node("hgx-h800", 2), {}, {});
  const Communicator pair{{0, 8}};
  const auto e = two.estimate(CollectiveKind::send_recv, Bytes::gib(1), pair);
  const double nic = Bytes::gib(1).as_double() / e.time.seconds() * 1e-9;
  EXPECT_NEAR(nvlink / nic, 3.2, 3.2 * 0.15);
}

// 2 x p4d.24xlarge: 8 A100 40 GB and 4 x 100 Gb/s EFA a node.
topology::ClusterSpec p4d_pair() {
  auto spec = node("hgx-a100", 2);
  spec.gpu = *topology::find_gpu_preset("a100-sxm-40g");
  spec.nic = {topology::NicKind::efa, 4, Bandwidth::gbps(100), Time::us(5),
              spec.nic.message_overhead};
  return spec;
}

// The Simple protocol, which AWS's OFI plugin forces.
CollectiveOptions simple() {
  CollectiveOptions o;
  o.protocol = Protocol::simple;
  return o;
}

// 2 x p4d.24xlarge (8 A100 40 GB, 4 x 100 Gb/s EFA each), nccl-tests scatter_perf from rank 0
// (validation/extra/aws_p4d_2node_efa_scatter.txt): 80.8 GB/s bus bandwidth at 2 GiB, so the
// root's node sends its remote parts at ~43 GB/s, through all four NICs (PXN relays each part to
// the NIC on its destination's rail). A gather's parts all arrive through the root's rail, one
// NIC, so it is about four times slower.
TEST(ReferencePoints, ScatterLeavesThroughEveryNicOfTheRootsNodeAndGatherArrivesThroughOne) {
  const AnalyticalCollectiveModel m(p4d_pair(), simple(), {});
  const double scatter = busbw(m, CollectiveKind::scatter, Bytes::gib(2));
  EXPECT_NEAR(scatter, 80.8, 80.8 * 0.05);
  const double gather = busbw(m, CollectiveKind::gather, Bytes::gib(2));
  EXPECT_NEAR(scatter / gather, 4.0, 0.4);
}

// The same run's small sizes: 86-89 us for one Simple message per peer across EFA v1 (whose stack
// costs ~75 us a step: the p4de all_reduce's 161 us LL floor is two). The receive flush Simple
// waits for is a local read; counted as a second stack latency it priced 170 us.
TEST(ReferencePoints, OneSimpleStepAcrossEfaPaysTheStackLatencyOnce) {
  const AnalyticalCollectiveModel m(p4d_pair(), simple(), {});
  EXPECT_NEAR(m.estimate(CollectiveKind::scatter, Bytes(64), m.world()).time.us(), 88.5,
              88.5 * 0.15);
}

TEST(ReferencePoints, B200NvlsAllReduceIsNear830GBpsBusBandwidth) {
  const AnalyticalCollectiveModel m(node("hgx-b200", 1), {}, {});
  EXPECT_NEAR(busbw(m, CollectiveKind::all_reduce, Bytes::gib(8)), 830, 830 * 0.12);
}

}  // namespace
}  // namespace dtsim::collectives

namespace dtsim::collectives {
namespace {

// 2 x GCP a3-highgpu-8g, 4 x 200 Gb/s NICs each.
topology::ClusterSpec a3_high_pair(topology::NicKind kind) {
  auto spec = node("hgx-h100", 2);
  spec.nic = {kind, 4, Bandwidth::gbps(200), Time::us(10), spec.nic.message_overhead};
  return spec;
}

// The source's NCCL settings: ring, Simple, 8 channels.
CollectiveOptions ring_simple_8_channels() {
  CollectiveOptions o;
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::simple;
  o.channels = 8;
  return o;
}

// GPUDirect-TCPX's all_gather sits on a flat ~1 ms from 1 to 32 MiB (validation/extra): its
// fifteen sends a connection, back to back with the previous collective's, at eight per send
// completion.
TEST(ReferencePoints, TcpxAllGatherSitsOnAboutOneMillisecondUpTo32MiB) {
  const AnalyticalCollectiveModel m(a3_high_pair(topology::NicKind::tcpx), ring_simple_8_channels(), {});
  for (const Bytes b : {Bytes::mib(1), Bytes::mib(16)}) {
    EXPECT_NEAR(m.estimate(CollectiveKind::all_gather, b, m.world()).time.us(), 1000, 1000 * 0.16);
  }
}

// The ring all_reduce sends twice as often (30 steps on 16 ranks), each under one 512 KiB slot up
// to 64 MiB: below that its time is those 30 sends at 8 per completion, not waits added to its
// chain of steps (the run: 1.40-1.83 ms from 256 KiB to 16 MiB).
TEST(ReferencePoints, TcpxAllReduceFloorIsItsSendsAtEightPerCompletion) {
  const AnalyticalCollectiveModel m(a3_high_pair(topology::NicKind::tcpx),
                                    ring_simple_8_channels(), {});
  auto us = [&](Bytes b) { return m.estimate(CollectiveKind::all_reduce, b, m.world()).time.us(); };
  const double floor_us = 30.0 / 8 * ModelParameters{}.tcpx_send_completion;
  EXPECT_NEAR(us(Bytes::kib(256)), floor_us, 1e-6);
  EXPECT_NEAR(us(Bytes::mib(4)), floor_us, 1e-6);
  EXPECT_NEAR(us(Bytes::mib(4)), 1638, 1638 * 0.1);
}

// ... and its large sizes reach ~71 GB/s busbw of the 100 GB/s line: 8 channels of 8 slots of
// 512 KiB, each held one completion.
TEST(ReferencePoints, TcpxBusBandwidthIsBoundByItsSlotsPerSendCompletion) {
  const AnalyticalCollectiveModel m(a3_high_pair(topology::NicKind::tcpx), ring_simple_8_channels(), {});
  EXPECT_NEAR(busbw(m, CollectiveKind::all_gather, Bytes::mib(512)), 71, 71 * 0.08);
}

// TCPXO (and RDMA) complete a send in the NIC: the same pair on it has no such floor.
TEST(ReferencePoints, TcpxoDoesNotWaitForItsSendsToComplete) {
  const AnalyticalCollectiveModel m(a3_high_pair(topology::NicKind::tcp), ring_simple_8_channels(), {});
  EXPECT_LT(m.estimate(CollectiveKind::all_gather, Bytes::mib(1), m.world()).time.us(), 150);
}

}  // namespace
}  // namespace dtsim::collectives
